// The plan of a run (harness/catalog/plan.h): what --only and case ids select, what a bad one is
// refused with, and the order variants start in. Pure functions of a made-up catalog.
#include <initializer_list>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/base/usage_error.h"
#include "harness/catalog/plan.h"

namespace fc {
namespace {

nlohmann::json left_out(std::initializer_list<std::pair<const char*, const char*>> names) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, role] : names) j.push_back({{"name", name}, {"role", role}});
  return j;
}

TEST(Plan, OnlySelectsVariantsAndUnknownCasesAreRefused) {
  nlohmann::json cat = nlohmann::json::array(
      {{{"id", "gomp-fork-hang"}, {"variants", {{{"name", "fork"}}, {{"name", "spawn"}}}}},
       {{"id", "tiny-nn-spawn"}, {"variants", {{{"name", "spawn"}}}}}});
  auto p = harness::plan_cases(cat, {}, "*/spawn");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0]["variants"].size(), 1u);
  EXPECT_EQ(harness::plan_cases(cat, {}, "gomp").size(), 1u);
  EXPECT_EQ(harness::plan_cases(cat, {"tiny-nn-spawn"}, "").size(), 1u);
  EXPECT_THROW(harness::plan_cases(cat, {"no-such-case"}, ""), harness::UsageError);
  EXPECT_THROW(harness::plan_cases(cat, {}, "zzz"), harness::UsageError);
}

TEST(Plan, StartOrderIsHeavySpawnFirstLightOnesBetweenTheRestAndAWaitingOneAfterEach) {
  using nlohmann::json;
  std::vector<json> variants = {
      {{"expected", "ok"}, {"start_method", "fork"}},           // 0 cheap program
      {{"expected", "ok"}, {"start_method", "spawn"}},          // 1 torch program
      {{"expected", "hang"}, {"start_method", "fork"}},         // 2 cheap program
      {{"expected", "error"}, {"start_method", "forkserver"}},  // 3 torch program
      {{"expected", "ok"}, {"start_method", "fork"}},           // 4 torch program
      {{"expected", "ok"}, {"start_method", "spawn"}},          // 5 cheap program
      {{"expected", "hang"}, {"start_method", "fork"}},         // 6 torch program
      {{"expected", "ok"}, {"start_method", "spawn"}},          // 7 torch program
  };
  const std::vector<std::string> programs = {"native", "torch",  "native", "torch",
                                             "torch",  "native", "torch",  "torch"};
  const std::map<std::string, double> load_s = {{"native", 0.01}, {"torch", 0.7}};
  // Working: the heavy spawn ones 1, 7, then heavy 3, 4 with light 5, 0 spread between them;
  // after the first two, the hangs (6, the costlier program's, then 2), one after each.
  EXPECT_EQ(harness::start_order(variants, programs, load_s),
            (std::vector<size_t>{1, 7, 6, 3, 2, 5, 4, 0}));
  // A program whose start-up cost is not known counts as cheap: all are light.
  EXPECT_EQ(harness::start_order(variants, programs, {}),
            (std::vector<size_t>{1, 5, 2, 7, 6, 3, 0, 4}));
  // A variant that waits by design (a grace period) is a waiting one, after the hangs.
  variants[5]["waits_s"] = 0.5;
  EXPECT_EQ(harness::start_order(variants, programs, load_s),
            (std::vector<size_t>{1, 7, 6, 3, 2, 0, 5, 4}));
  // Only waiting ones: all of them, in turn.
  const std::vector<json> hangs = {{{"expected", "hang"}}, {{"expected", "hang"}}};
  EXPECT_EQ(harness::start_order(hangs, {"native", "torch"}, load_s), (std::vector<size_t>{1, 0}));
}

TEST(Plan, VariantsLeftOutByOnlyAreNamedWithTheirRole) {
  const nlohmann::json catalog = nlohmann::json::parse(R"([{"id": "c", "variants": [
      {"name": "fork", "role": "hazard"}, {"name": "spawn", "role": "fix"}]}])");
  const auto planned = harness::plan_cases(catalog, {}, "c/fork");
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0]["not_selected"], left_out({{"spawn", "fix"}}));
  EXPECT_FALSE(harness::plan_cases(catalog, {}, "")[0].contains("not_selected"));
}

}  // namespace
}  // namespace fc
