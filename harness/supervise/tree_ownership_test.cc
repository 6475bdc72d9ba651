// Whose tree it is (tree_ownership.h): forkcheck stops and ends what it started; what it attached
// to is never stopped with it, and is left as it is unless forkcheck itself ended it.
#include "harness/supervise/tree_ownership.h"

#include <gtest/gtest.h>

namespace fc::harness {
namespace {

TEST(TreeOwnership, CtrlZStopsOnlyTheTreesForkcheckStarted) {
  EXPECT_TRUE(stops_with_forkcheck(false, false));  // a child's tree, or its debugger
  EXPECT_FALSE(stops_with_forkcheck(true, false));  // an attached process
  EXPECT_FALSE(stops_with_forkcheck(false, true));  // the debugger holding an attached process
}

TEST(TreeOwnership, AnAttachedTreeIsLeftAsItIsUnlessForkcheckSignalledIt) {
  ChildResult r;
  EXPECT_FALSE(left_as_it_is(false, r)) << "a tree forkcheck started is ended";
  EXPECT_TRUE(left_as_it_is(true, r)) << "the watch ended, or the process ended by itself";
  r.sent_sigterm = true;
  EXPECT_FALSE(left_as_it_is(true, r)) << "ended by forkcheck (--kill-on-hang): ended wholly";
  r.sent_sigterm = false;
  r.sent_sigkill = true;
  EXPECT_FALSE(left_as_it_is(true, r));
}

}  // namespace
}  // namespace fc::harness
