// Where an orphan re-parented to forkcheck goes (orphans.h).
#include <gtest/gtest.h>

#include "harness/supervise/orphans.h"

namespace fc::harness {
namespace {

TEST(Orphans, AClaimedOrphanGoesToItsTreeWhateverElseIsTrue) {
  int asked = 0;
  const auto earlier = [&] { return ++asked, true; };
  EXPECT_EQ(where_orphan_goes(true, true, false, 3, earlier), OrphanGoesTo::kClaimingTree);
  EXPECT_EQ(asked, 0) << "its environment is not read";
}

TEST(Orphans, AnUnclaimedOneGoesToTheOnlyTreeUnlessItIsOfAnEarlierJob) {
  EXPECT_EQ(where_orphan_goes(false, false, true, 1, [] { return false; }),
            OrphanGoesTo::kOnlyTree);
  EXPECT_EQ(where_orphan_goes(false, false, true, 1, [] { return true; }), OrphanGoesTo::kStray)
      << "an earlier variant's: killed at the end, not the running tree's";
  EXPECT_EQ(where_orphan_goes(false, false, true, 2, [] { return false; }), OrphanGoesTo::kStray)
      << "two trees: nobody can say whose";
  EXPECT_EQ(where_orphan_goes(false, false, true, 0, [] { return false; }), OrphanGoesTo::kStray);
}

TEST(Orphans, AChildInOurOwnGroupIsNotATreesUnlessEveryChildOfOursIs) {
  EXPECT_EQ(where_orphan_goes(false, true, false, 1, [] { return false; }), OrphanGoesTo::kNotOurs)
      << "a program that embeds the supervisor: its own child";
  EXPECT_EQ(where_orphan_goes(false, true, true, 1, [] { return false; }), OrphanGoesTo::kOnlyTree)
      << "forkcheck itself starts no child but through the supervisor";
}

}  // namespace
}  // namespace fc::harness
