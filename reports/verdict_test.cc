// The verdict of a case from its variants' outcomes (reports/verdict.h), and the run log's fold
// of an interrupted run (reports/run_log.h): pure functions of made-up records.
#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"
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

// The verdict of variants and left-out variants as a report holds them.
reports::Verdict verdict_of(const nlohmann::json& variants,
                            const nlohmann::json& not_selected = nlohmann::json::array()) {
  const auto c = reports::read_as<reports::Case>(
      nlohmann::json{{"variants", variants}, {"not_selected", not_selected}});
  return reports::case_verdict(c.variants, c.not_selected);
}

TEST(Verdict, Reproduced) {
  auto r = verdict_of({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "reproduced");
}

TEST(Verdict, FixThatFailsIsARegression) {
  auto r = verdict_of({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "hang")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed hang"), std::string::npos);
}

TEST(Verdict, HazardThatDoesNotBiteIsNotReproduced) {
  auto r = verdict_of({v("fork", "hazard", "hang", "ok"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

TEST(Verdict, OnlyHonestOkHazardsIsNotReproduced) {
  auto r = verdict_of({v("fork", "hazard", "ok", "ok"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

// A timeout is not a hang: the tree was still working when it was stopped, so a hazard expected
// to hang that timed out did not reproduce the hang, and the reason says what it did instead.
TEST(Verdict, TimeoutOfAnExpectedHangIsNotReproduced) {
  auto r = verdict_of({v("fork", "hazard", "hang", "timeout"), v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
  EXPECT_NE(
      r.reason.find(
          "fork expected hang, observed timeout (the deadline passed while the process tree was "
          "not blocked)"),
      std::string::npos)
      << r.reason;
  EXPECT_EQ(r.reason.find("hung"), std::string::npos) << r.reason;
  // Beside another hazard that did hang as documented: still not reproduced.
  r = verdict_of({v("fork", "hazard", "hang", "hang"), v("fork-busy", "hazard", "hang", "timeout"),
                  v("spawn", "fix", "ok", "ok")});
  EXPECT_EQ(r.verdict, "not-reproduced");
}

TEST(Verdict, FixThatTimesOutOrBreaksItsChannelIsARegression) {
  auto r = verdict_of({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "timeout")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed timeout (the deadline passed"),
            std::string::npos)
      << r.reason;
  r = verdict_of({v("fork", "hazard", "hang", "hang"), v("spawn", "fix", "ok", "protocol-error")});
  EXPECT_EQ(r.verdict, "regression");
  EXPECT_NE(r.reason.find("spawn expected ok, observed protocol-error (the child sent something on "
                          "its channel that "
                          "is not a forkcheck message)"),
            std::string::npos)
      << r.reason;
  // A regression outranks a hazard that timed out instead of hanging.
  r = verdict_of(
      {v("fork", "hazard", "hang", "timeout"), v("spawn", "fix", "ok", "protocol-error")});
  EXPECT_EQ(r.verdict, "regression");
}

TEST(Verdict, ExecSubjectThatTimesOutOrBreaksItsChannelFailed) {
  for (const char* outcome : {"timeout", "protocol-error"}) {
    auto r = verdict_of(nlohmann::json::array({v("exec", "subject", "ok", outcome)}));
    EXPECT_EQ(r.verdict, "failed") << outcome;
    EXPECT_EQ(r.reason.rfind(std::string(outcome) + ": ", 0), 0u) << r.reason;
  }
}

TEST(Verdict, AllSkippedIsSkippedWithReasons) {
  auto r = verdict_of(nlohmann::json::array({v("fork", "hazard", "skip", "skip")}));
  EXPECT_EQ(r.verdict, "skipped");
  EXPECT_NE(r.reason.find("fork: m"), std::string::npos);
}

// forkcheck interrupted before the user's program ended (exec, watch): not the program's failure.
TEST(Verdict, ASubjectNotSeenToItsEndIsSkippedNotFailed) {
  nlohmann::json s = v("exec", "subject", "ok", "skip");
  s["interrupted"] = true;
  s["message"] = "not finished: forkcheck was interrupted by SIGINT after 3.0 s and killed it";
  auto r = verdict_of(nlohmann::json::array({s}));
  EXPECT_EQ(r.verdict, "skipped");
  EXPECT_EQ(r.reason, s["message"]);
}

// Hazards never run because forkcheck was interrupted might have failed: the case is partial,
// never "not reproduced" on the word of the fixes that did run.
TEST(Verdict, HazardsNotRunBecauseOfAnInterruptMakeAPartialVerdict) {
  nlohmann::json hazard = v("fork", "hazard", "hang", "skip");
  hazard["not_run"] = hazard["interrupted"] = true;
  auto r = verdict_of({hazard, v("spawn", "fix", "ok", "ok")});
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

}  // namespace
// The sentence says what happened: a hazard variant that was ok (as its expectation said) is not
// called failed, and what did not run is named with its reason.
TEST(Verdict, AReproducedCaseSaysWhatHappenedNotMore) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("fork", "hazard", "hang", "hang"));
  variants.push_back(v("fork-libomp", "hazard", "ok", "ok"));
  variants.push_back(v("spawn", "fix", "ok", "ok"));
  variants.push_back(v("forkserver", "fix", "ok", "skip"));
  const auto r = verdict_of(variants);
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
  const auto r = verdict_of(variants, left_out({{"spawn", "fix"}, {"forkserver", "fix"}}));
  EXPECT_EQ(r.verdict, "reproduced");
  EXPECT_EQ(r.reason,
            "failed as documented: fork hang; partial run: not selected: spawn; forkserver (fixes "
            "not run: spawn; forkserver)");
}

TEST(Verdict, APartialRunOfFixesAloneClaimsNothingAboutTheHazard) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("spawn", "fix", "ok", "ok"));
  const auto r = verdict_of(variants, left_out({{"fork", "hazard"}}));
  EXPECT_EQ(r.verdict, "partial");
  EXPECT_EQ(r.reason.find("this platform"), std::string::npos) << r.reason;
  EXPECT_EQ(
      r.reason,
      "no hazard variant was selected (fork); fixes ok: spawn; partial run: not selected: fork");
}

TEST(Verdict, AHazardOkHereWithAnotherLeftOutIsPartialNotNotReproduced) {
  nlohmann::json variants = nlohmann::json::array();
  variants.push_back(v("fork-default-threads", "hazard", "ok", "ok"));
  const auto r = verdict_of(variants, left_out({{"fork", "hazard"}}));
  EXPECT_EQ(r.verdict, "partial");
  EXPECT_EQ(r.reason,
            "no hazard variant that ran failed (ok here, as expected: fork-default-threads), and "
            "fork did not run; partial run: not selected: fork");
}

// A worker killed by a signal 0.1 s after forkcheck asked it for its stacks may have been killed
// by the asking: said so, and not counted against the program; the same death 3 s after is the
// program's own failure.
TEST(Verdict, AWorkerDeadJustAfterForkcheckLookedIsNotTheProgramsFailure) {
  auto subject = [](double died_at_s) {
    using nlohmann::json;
    json look = json::object();
    look["pid"] = 42;
    look["what"] = "asked one of its threads for its stack";
    look["at_s"] = 5.0;
    json exit = json::object();
    exit["pid"] = 42;
    exit["returncode"] = -11;
    exit["signal"] = "SIGSEGV";
    exit["name"] = "ForkPoolWorker-1";
    exit["at_s"] = died_at_s + 0.5;
    json parent = json::object();
    parent["pid"] = 41;
    parent["born"] = "exec";
    parent["child_exits"] = json::array({exit});
    json worker = json::object();
    worker["pid"] = 42;
    worker["born"] = "fork";
    worker["gone_s"] = died_at_s;
    json s = v("exec", "subject", "", "ok");
    s["message"] = "exited 0";
    s["watchdog"]["look_signals"] = json::array({look});
    s["python"]["processes"] = json::array({parent, worker});
    return s;
  };
  auto soon = verdict_of(nlohmann::json::array({subject(5.1)}));
  EXPECT_EQ(soon.verdict, "ok") << soon.reason;
  EXPECT_NE(
      soon.reason.find("pid 42 ForkPoolWorker-1 killed by SIGSEGV 100 ms after forkcheck "
                       "asked one of its threads for its stack: forkcheck may have caused it"),
      std::string::npos)
      << soon.reason;
  auto later = verdict_of(nlohmann::json::array({subject(8.0)}));
  EXPECT_EQ(later.verdict, "failed") << later.reason;
  EXPECT_EQ(later.reason.find("forkcheck may have caused it"), std::string::npos) << later.reason;
}

}  // namespace
}  // namespace fc
