#include <gtest/gtest.h>

#include "harness/common/plan.h"
#include "harness/common/usage_error.h"
#include "reports/run_log.h"
#include "reports/verdict.h"

namespace fc {
namespace {

nlohmann::json v(const char* name, const char* role, const char* expected, const char* outcome) {
  return {{"name", name},
          {"role", role},
          {"expected", expected},
          {"outcome", outcome},
          {"message", "m"}};
}

TEST(Verdict, Reproduced) {
  auto r =
      reports::case_verdict({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "reproduced");
}

TEST(Verdict, FixThatFailsIsARegression) {
  auto r =
      reports::case_verdict({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "hang")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed hang"), std::string::npos);
}

TEST(Verdict, HazardThatDoesNotBiteIsNotReproduced) {
  auto r =
      reports::case_verdict({v("fork", "hazard", "hang", "ok"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

TEST(Verdict, OnlyHonestOkHazardsIsNotReproduced) {
  auto r = reports::case_verdict({v("fork", "hazard", "ok", "ok"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

// A timeout is not a hang: the tree was still working when it was stopped, so a hazard expected
// to hang that timed out did not reproduce the hang, and the reason says what it did instead.
TEST(Verdict, TimeoutOfAnExpectedHangIsNotReproduced) {
  auto r = reports::case_verdict(
      {v("fork", "hazard", "hang", "timeout"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
  EXPECT_NE(
      r.reason.find(
          "fork expected hang, observed timeout (the deadline passed while the process tree was "
          "still working)"),
      std::string::npos)
      << r.reason;
  EXPECT_EQ(r.reason.find("hung"), std::string::npos) << r.reason;
  // Beside another hazard that did hang as documented: still not reproduced.
  r = reports::case_verdict({v("fork", "hazard", "hang", "hang"),
                             v("fork-busy", "hazard", "hang", "timeout"),
                             v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

TEST(Verdict, FixThatTimesOutOrBreaksItsChannelIsARegression) {
  auto r = reports::case_verdict(
      {v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "timeout")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed timeout (the deadline passed"),
            std::string::npos)
      << r.reason;
  r = reports::case_verdict(
      {v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "protocol-error")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed protocol-error (the child sent something on "
                          "its channel that "
                          "is not a forkcheck message)"),
            std::string::npos)
      << r.reason;
  // A regression outranks a hazard that timed out instead of hanging.
  r = reports::case_verdict(
      {v("fork", "hazard", "hang", "timeout"), v("spawn", "fix", "ok", "protocol-error")});
  EXPECT_EQ(r.verdict, "regression");
}

TEST(Verdict, ExecSubjectThatTimesOutOrBreaksItsChannelFailed) {
  for (const char* outcome : {"timeout", "protocol-error"}) {
    auto r = reports::case_verdict(nlohmann::json::array({v("exec", "subject", "ok", outcome)}));
    EXPECT_EQ(r.verdict, "failed") << outcome;
    EXPECT_EQ(r.reason.rfind(std::string(outcome) + ": ", 0), 0u) << r.reason;
  }
}

TEST(Verdict, AllSkippedIsSkippedWithReasons) {
  auto r = reports::case_verdict(nlohmann::json::array({v("fork", "hazard", "skip", "skip")}));
  EXPECT_EQ(r.verdict, "skipped");
  EXPECT_NE(r.reason.find("fork: m"), std::string::npos);
}

// forkcheck interrupted before the user's program ended (exec, watch): not the program's failure.
TEST(Verdict, ASubjectNotSeenToItsEndIsSkippedNotFailed) {
  nlohmann::json s = v("exec", "subject", "ok", "skip");
  s["interrupted"] = true;
  s["message"] = "not finished: forkcheck was interrupted by SIGINT after 3.0 s and killed it";
  auto r = reports::case_verdict(nlohmann::json::array({s}));
  EXPECT_EQ(r.verdict, "skipped");
  EXPECT_EQ(r.reason, s["message"]);
}

// Hazards never run because forkcheck was interrupted might have failed: the case is partial,
// never "not reproduced" on the word of the fixes that did run.
TEST(Verdict, HazardsNotRunBecauseOfAnInterruptMakeAPartialVerdict) {
  nlohmann::json hazard = v("fork", "hazard", "hang", "skip");
  hazard["not_run"] = hazard["interrupted"] = true;
  auto r = reports::case_verdict({hazard, v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "partial");
  EXPECT_NE(r.reason.find("no hazard variant ran to its end (fork) (forkcheck was interrupted)"),
            std::string::npos)
      << r.reason;
}

TEST(RunLog, FoldMarksUnfinishedVariantsOfAnInterruptedRun) {
  std::vector<nlohmann::json> lines = {
      {{"type", "run"}, {"tool", {{"name", "forkcheck"}, {"version", "x"}}}},
      {{"type", "case"},
       {"id", "c"},
       {"variants", {v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "ok")}}},
      {{"type", "variant"}, {"case", "c"}, {"name", "fork"}, {"outcome", "hang"}}};
  lines[1]["variants"][0].erase("outcome");
  lines[1]["variants"][1].erase("outcome");
  auto r = reports::fold_run_log(lines);
  EXPECT_EQ(r["run"]["complete"], false);
  EXPECT_EQ(r["cases"][0]["variants"][0]["outcome"], "hang");
  EXPECT_EQ(r["cases"][0]["variants"][1]["outcome"], "skip");
  EXPECT_EQ(r["cases"][0]["variants"][1]["not_run"], true);
  EXPECT_EQ(r["schema_version"], reports::kSchemaVersion);
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

}  // namespace
// The sentence says what happened: a hazard variant that was ok (as its expectation said) is not
// called failed, and what did not run is named with its reason.
TEST(Verdict, AReproducedCaseSaysWhatHappenedNotMore) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("fork", "hazard", "hang", "hang"));
  variants.push_back(v("fork-libomp", "hazard", "ok", "ok"));
  variants.push_back(v("spawn", "fix", "ok", "ok"));
  variants.push_back(v("forkserver", "fix", "ok", "skip"));
  const auto r = reports::case_verdict(variants);
  EXPECT_EQ(r.verdict, "reproduced");
  EXPECT_EQ(r.reason,
            "failed as documented: fork hang; ok here, as expected: fork-libomp; fixes ok: spawn; "
            "not run: forkserver: m");
  EXPECT_EQ(r.reason.find("every"), std::string::npos) << r.reason;
}

}  // namespace fc

namespace fc {
namespace {

nlohmann::json left_out(std::initializer_list<std::pair<const char*, const char*>> names) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [name, role] : names) a.push_back({{"name", name}, {"role", role}});
  return a;
}

TEST(Verdict, APartialRunSaysWhatItLeftOut) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("fork", "hazard", "hang", "hang"));
  const auto r =
      reports::case_verdict(variants, left_out({{"spawn", "fix"}, {"forkserver", "fix"}}));
  EXPECT_EQ(r.verdict, "reproduced");
  EXPECT_EQ(r.reason,
            "failed as documented: fork hang; partial run: not selected: spawn; forkserver (fixes "
            "not run: spawn; forkserver)");
}

TEST(Verdict, APartialRunOfFixesAloneClaimsNothingAboutTheHazard) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("spawn", "fix", "ok", "ok"));
  const auto r = reports::case_verdict(variants, left_out({{"fork", "hazard"}}));
  EXPECT_EQ(r.verdict, "partial");
  EXPECT_EQ(r.reason.find("this platform"), std::string::npos) << r.reason;
  EXPECT_EQ(
      r.reason,
      "no hazard variant was selected (fork); fixes ok: spawn; partial run: not selected: fork");
}

TEST(Verdict, AHazardOkHereWithAnotherLeftOutIsPartialNotNotReproduced) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("fork-default-threads", "hazard", "ok", "ok"));
  const auto r = reports::case_verdict(variants, left_out({{"fork", "hazard"}}));
  EXPECT_EQ(r.verdict, "partial");
  EXPECT_EQ(r.reason,
            "no hazard variant that ran failed (ok here, as expected: fork-default-threads), and "
            "fork did not run; partial run: not selected: fork");
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
