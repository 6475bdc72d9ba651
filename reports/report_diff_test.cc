// `forkcheck diff`'s comparison (reports/report_diff.h) on reports made by hand: what counts as a
// regression, an improvement, a mere change or coverage; which environment difference comes
// first; which reports are refused. No run, no child process.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/report_diff.h"

namespace {

using fc::reports::CaseChange;
using fc::reports::Effect;
using nlohmann::json;

json variant(const std::string& name, const std::string& role, const std::string& expected,
             const std::string& outcome, const std::string& message = "") {
  return {{"name", name},       {"role", role},       {"expected", expected},
          {"outcome", outcome}, {"message", message}, {"matched", expected == outcome}};
}

json a_case(const std::string& id, const std::string& verdict, json variants) {
  return {{"id", id},
          {"verdict", verdict},
          {"verdict_reason", verdict + " because"},
          {"variants", std::move(variants)}};
}

// The environment of the development machine, as run.environment holds it (trimmed).
json environment() {
  return {
      {"os",
       {{"sysname", "Linux"},
        {"kernel", "6.1.0"},
        {"machine", "x86_64"},
        {"name", "Debian GNU/Linux 12 (bookworm)"}}},
      {"libc", {{"name", "glibc"}, {"version", "2.36"}}},
      {"compiler", "GCC 12.2.0"},
      {"cpus", {{"online", 2}, {"affinity", 2}}},
      {"threads",
       {{"nproc", 2}, {"omp_get_max_threads", 1}, {"torch_intra_op", 1}, {"torch_inter_op", 1}}},
      {"openmp_runtimes", {"libgomp (GNU) libgomp.so.1.0.0"}},
      {"start_methods", {"fork", "spawn", "forkserver"}},
      {"cuda", {{"driver", nullptr}, {"summary", "no CUDA driver"}}},
      {"libtorch",
       {{"version", "1.13.1"},
        {"config", "PyTorch built with:\n  - GCC 12.2\n"},
        {"parallel_info", "ATen/Parallel:\n  at::get_num_threads() : 1\n"}}},
      {"variables", json::object()},
      {"machine",
       {{"dev_shm", {{"size_bytes", 25276502016.0}, {"free_bytes", 1.0}}},
        {"open_files", {{"soft", 20000}, {"hard", 20000}}},
        {"cpus", {{"online", 2}, {"affinity", 2}, {"cgroup_quota", nullptr}}},
        {"variables", json::object()}}},
      {"risks", json::array()}};
}

json report(json cases, bool ok = true) {
  return {{"schema_version", "1.0"},
          {"tool", {{"name", "forkcheck"}, {"version", "0.1.0"}}},
          {"run",
           {{"command", "run"},
            {"started_at", "2026-11-23T17:37:49Z"},
            {"options", {{"timeout_s", 60.0}, {"jobs", 4}, {"only", ""}, {"zygote", true}}},
            {"environment", environment()}}},
          {"cases", std::move(cases)},
          {"summary", {{"ok", ok}}}};
}

// hang-case as it reproduces here: the hazard hangs, the fixes are ok. Its catalog entry
// names the facts that may explain a change of it.
json gomp(const std::string& fork = "hang", const std::string& spawn = "ok",
          const std::string& verdict = "reproduced") {
  json c = a_case("hang-case", verdict,
                  {variant("fork", "hazard", "hang", fork), variant("spawn", "fix", "ok", spawn)});
  c["environment_topics"] = {"openmp", "omp-threads", "openmp-vars", "cpus", "start-methods"};
  return c;
}

json shm(const std::string& fork = "crash") {
  json c = a_case("shm-case", "reproduced",
                  {variant("fork", "hazard", "crash", fork), variant("disk", "fix", "ok", "ok")});
  c["environment_topics"] = {"kernel", "shm", "os", "start-methods"};
  return c;
}

// The diff of two reports as `forkcheck diff` reads them: each into the model once.
fc::reports::ReportDiff diff(const json& a, const json& b) {
  return fc::reports::diff_reports(fc::reports::read_report(a), fc::reports::read_report(b));
}
std::string incomparable(const json& a, const json& b) {
  return fc::reports::incomparable_reports(fc::reports::read_report(a),
                                           fc::reports::read_report(b));
}

const CaseChange* find_change(const fc::reports::ReportDiff& d, const std::string& kind,
                              const std::string& variant = "") {
  for (const auto& c : d.changes)
    if (c.kind == kind && c.variant == variant) return &c;
  return nullptr;
}

TEST(ReportDiff, AReportAgainstItselfHasNoDifferences) {
  const json r = report({gomp(), shm()});
  const auto d = diff(r, r);
  EXPECT_TRUE(d.identical());
  EXPECT_FALSE(d.regressed);
  EXPECT_EQ(fc::reports::diff_markdown(d, "a", "b").rfind("## forkcheck diff: no differences", 0),
            0u);
}

TEST(ReportDiff, AFixThatBrokeIsARegressionNamingTheCaseAndVariant) {
  const auto d =
      diff(report({gomp(), shm()}), report({gomp("hang", "hang", "regression"), shm()}, false));
  EXPECT_TRUE(d.regressed);
  ASSERT_FALSE(d.changes.empty());
  EXPECT_EQ(d.changes[0].case_id, "hang-case");
  const CaseChange* v = find_change(d, "outcome", "spawn");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->effect, Effect::kRegression);
  EXPECT_EQ(v->a, "ok");
  EXPECT_EQ(v->b, "hang");
  EXPECT_EQ(v->expected_b, "ok");
  const CaseChange* verdict = find_change(d, "verdict");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->a, "reproduced");
  EXPECT_EQ(verdict->b, "regression");
  EXPECT_EQ(find_change(d, "summary"), nullptr) << "the case says why the run is not ok";
}

// The issue's own check: a copy with one case's verdict changed to a failing one.
TEST(ReportDiff, AVerdictTurnedFailingIsARegression) {
  json b = report({gomp(), shm()});
  b["cases"][1]["verdict"] = "regression";
  const auto d = diff(report({gomp(), shm()}), b);
  EXPECT_TRUE(d.regressed);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].case_id, "shm-case");
  EXPECT_EQ(d.changes[0].effect, Effect::kRegression);
}

TEST(ReportDiff, AFixThatRecoveredIsAnImprovementNotARegression) {
  const auto d = diff(report({gomp("hang", "hang", "regression")}, false), report({gomp()}));
  EXPECT_FALSE(d.regressed);
  EXPECT_EQ(d.count(Effect::kImprovement), 2u) << "the variant and the verdict";
  EXPECT_EQ(d.count(Effect::kRegression), 0u);
}

// The cluster-versus-laptop question: the hazard hangs in A and not in B. A fact, not a failure.
TEST(ReportDiff, AHazardThatNoLongerShowsIsAChangeNotARegression) {
  const auto d = diff(report({gomp()}), report({gomp("ok", "ok", "not-reproduced")}));
  EXPECT_FALSE(d.regressed);
  const CaseChange* v = find_change(d, "outcome", "fork");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->effect, Effect::kChanged);
  EXPECT_EQ(v->role, "hazard");
}

TEST(ReportDiff, AVariantSkippedOnOneSideIsCoverage) {
  json b = report({gomp("hang", "skip")});
  b["cases"][0]["variants"][1]["message"] = "no spawn here";
  const auto d = diff(report({gomp()}), b);
  EXPECT_FALSE(d.regressed) << "a fix not run is not a fix that failed";
  const CaseChange* v = find_change(d, "outcome", "spawn");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->effect, Effect::kCoverage);
  EXPECT_NE(v->why.find("no spawn here"), std::string::npos) << v->why;
}

TEST(ReportDiff, ASkipReasonThatChangedIsSaid) {
  json a = report({gomp("skip")}), b = report({gomp("skip")});
  a["cases"][0]["variants"][0]["message"] = "no OpenMP";
  b["cases"][0]["variants"][0]["message"] = "not on Windows";
  const auto d = diff(a, b);
  const CaseChange* v = find_change(d, "skip-reason", "fork");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->a, "no OpenMP");
  EXPECT_EQ(v->b, "not on Windows");
  EXPECT_FALSE(d.regressed);
}

TEST(ReportDiff, CasesAndVariantsInOneReportOnlyAreCoverage) {
  json a = report({gomp()});
  a["cases"][0]["variants"].push_back(variant("forkserver", "fix", "ok", "ok"));
  const auto d = diff(a, report({gomp(), shm()}));
  EXPECT_FALSE(d.regressed);
  const CaseChange* only_a = find_change(d, "only-in-a", "forkserver");
  ASSERT_NE(only_a, nullptr);
  EXPECT_EQ(only_a->case_id, "hang-case");
  const CaseChange* only_b = find_change(d, "only-in-b");
  ASSERT_NE(only_b, nullptr);
  EXPECT_EQ(only_b->case_id, "shm-case");
  EXPECT_EQ(d.count(Effect::kCoverage), 2u);
}

// B's run not ok with no case to say why (a repro program could not list its cases).
TEST(ReportDiff, ARunNoLongerOkIsARegressionEvenWithoutACase) {
  json b = report({gomp()}, false);
  b["run"]["catalog_errors"] = {"forkcheck-repro-torch --list failed"};
  const auto d = diff(report({gomp()}), b);
  EXPECT_TRUE(d.regressed);
  const CaseChange* s = find_change(d, "summary");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->why.find("could not list"), std::string::npos) << s->why;
}

TEST(ReportDiff, TheWorstCaseComesFirst) {
  // shm-case only changed (its hazard no longer crashes); hang-case regressed after it.
  const auto d =
      diff(report({shm(), gomp()}), report({shm("ok"), gomp("hang", "error", "regression")}));
  ASSERT_GE(d.changes.size(), 3u);
  EXPECT_EQ(d.changes[0].case_id, "hang-case");
  EXPECT_EQ(d.changes.back().case_id, "shm-case");
}

// The likely cause first: of three differences, the one linked to the changed case leads, even
// where an unlinked one comes earlier in the environment's own order.
TEST(ReportDiff, AnEnvironmentDifferenceLinkedToAChangedCaseComesFirst) {
  json a = report({gomp(), shm()}), b = report({gomp("ok", "ok", "not-reproduced"), shm()});
  b["run"]["options"]["jobs"] = 16;  // unlinked, listed early
  b["run"]["environment"]["machine"]["dev_shm"]["size_bytes"] = 67108864.0;  // shm-case's
  b["run"]["environment"]["threads"]["omp_get_max_threads"] = 8;             // hang-case's
  const auto d = diff(a, b);
  ASSERT_EQ(d.environment.size(), 3u);
  EXPECT_EQ(d.environment[0].name, "threads.omp_get_max_threads");
  EXPECT_EQ(d.environment[0].a, "1");
  EXPECT_EQ(d.environment[0].b, "8");
  EXPECT_EQ(d.environment[0].may_explain, std::vector<std::string>{"hang-case/fork"});
  for (size_t i = 1; i < 3; ++i)
    EXPECT_TRUE(d.environment[i].may_explain.empty())
        << d.environment[i].name << ": shm-case did not change";
  EXPECT_EQ(d.environment[1].name, "options.jobs") << "then the rest in their own order";
  EXPECT_EQ(d.environment[2].name, "dev_shm.size");
  EXPECT_EQ(d.environment[2].b, "64 MiB");
}

// The facts a case's change may be explained by come from its catalog entry, in the report: a
// case that names none (a report from before them) is linked to every fact.
TEST(ReportDiff, ACasesTopicsComeFromItsCatalogEntry) {
  json a = report({gomp()}), b = report({gomp("ok", "ok", "not-reproduced")});
  b["run"]["environment"]["machine"]["dev_shm"]["size_bytes"] = 67108864.0;
  auto d = diff(a, b);
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_TRUE(d.environment[0].may_explain.empty()) << "hang-case names no shm";
  for (json* r : {&a, &b}) (*r)["cases"][0].erase("environment_topics");
  d = diff(a, b);
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].may_explain, std::vector<std::string>{"hang-case/fork"});
}

TEST(ReportDiff, AVariableSetOnOneSideOnlyDiffers) {
  json b = report({gomp()});
  b["run"]["environment"]["machine"]["variables"]["KMP_INIT_AT_FORK"] = "FALSE";
  const auto d = diff(report({gomp()}), b);
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].name, "variables.KMP_INIT_AT_FORK");
  EXPECT_EQ(d.environment[0].a, "unset");
  EXPECT_EQ(d.environment[0].b, "FALSE");
}

TEST(ReportDiff, NoHangAfterIsNoneNotZeroSeconds) {
  json a = report({gomp()}), b = report({gomp()});
  a["run"]["options"]["hang_after_s"] = 0.0;
  b["run"]["options"]["hang_after_s"] = 2.0;
  const auto d = diff(a, b);
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].name, "options.hang_after_s");
  EXPECT_EQ(d.environment[0].a, "none");
  EXPECT_EQ(d.environment[0].b, "2.0");
}

// An older 1.x report may lack fields: unknown is not different, and nothing throws.
TEST(ReportDiff, FieldsAnOlderReportLacksAreUnknownNotDifferent) {
  json old = report({gomp()});
  old["schema_version"] = "1.0";
  old["run"]["environment"].erase("machine");
  old["run"]["environment"].erase("libtorch");
  old["run"]["environment"]["threads"].erase("torch_intra_op");
  old["run"].erase("options");
  old.erase("summary");
  old["cases"][0].erase("verdict");
  old["cases"][0]["variants"][1].erase("expected");
  json now = report({gomp()});
  now["schema_version"] = "1.3";
  EXPECT_EQ(fc::reports::unreadable_report(old), "");
  EXPECT_EQ(fc::reports::unreadable_report(now), "");
  const auto d = diff(old, now);
  EXPECT_TRUE(d.identical()) << fc::reports::diff_to_json(d, "old", "now").dump(2);
  // A summary that does not say is unknown: B's "not ok" is no regression against it.
  json not_ok = now;
  not_ok["summary"]["ok"] = false;
  EXPECT_EQ(find_change(diff(old, not_ok), "summary"), nullptr);
  ASSERT_NE(find_change(diff(now, not_ok), "summary"), nullptr);
  // Not even a run or an environment: still comparable, by its cases.
  json bare = {{"schema_version", "1.0"}, {"cases", {gomp()}}};
  EXPECT_EQ(fc::reports::unreadable_report(bare), "");
  EXPECT_TRUE(diff(bare, now).identical());
}

TEST(ReportDiff, ReportsOfAnotherSchemaOrNoReportAreRefusedWithTheReason) {
  auto why = [](const json& r) { return fc::reports::unreadable_report(r); };
  json r = report({gomp()});
  EXPECT_NE(why(json::array()).find("not a JSON object"), std::string::npos);
  json no_version = r;
  no_version.erase("schema_version");
  EXPECT_NE(why(no_version).find("no schema_version"), std::string::npos);
  json newer = r;
  newer["schema_version"] = "2.0";
  EXPECT_NE(why(newer).find("2.0 is newer"), std::string::npos) << why(newer);
  json older = r;
  older["schema_version"] = "0.9";
  EXPECT_NE(why(older).find("0.9 is older"), std::string::npos) << why(older);
  json garbage = r;
  garbage["schema_version"] = 1;
  EXPECT_NE(why(garbage).find("not a version"), std::string::npos) << why(garbage);
  json log_newer = r;  // a folded run log: its header says what wrote it
  log_newer["run"]["schema_version"] = "2.1";
  EXPECT_NE(why(log_newer).find("2.1 is newer"), std::string::npos) << why(log_newer);
  json other_tool = r;
  other_tool["tool"]["name"] = "pytest";
  EXPECT_NE(why(other_tool).find("made by pytest"), std::string::npos);
  json no_cases = r;
  no_cases["cases"] = "none";
  EXPECT_NE(why(no_cases).find("no list of cases"), std::string::npos);
  json no_id = r;
  no_id["cases"][0].erase("id");
  EXPECT_NE(why(no_id).find("case 1 has no id"), std::string::npos);
  for (const json& bad :
       {no_version, newer, older, garbage, log_newer, other_tool, no_cases, no_id})
    EXPECT_EQ(why(bad).find('\n'), std::string::npos) << "one line";
}

// exec and watch have one case, the user's program: comparable with each other, not with the
// catalog's cases.
TEST(ReportDiff, AProgramsRunIsNotComparedWithTheCatalogs) {
  json exec = report({a_case("exec", "failed", {variant("exec", "subject", "ok", "hang")})});
  exec["run"]["command"] = "exec";
  json watch = report({a_case("watch", "ok", {variant("watch", "subject", "ok", "ok")})});
  watch["run"]["command"] = "watch";
  EXPECT_NE(incomparable(report({gomp()}), exec).find("your own program"), std::string::npos);
  EXPECT_EQ(incomparable(exec, watch), "");
  const auto d = diff(watch, exec);
  EXPECT_TRUE(d.regressed) << "the program hung in B";
  const CaseChange* v = find_change(d, "outcome", "watch");
  ASSERT_NE(v, nullptr) << "the one variant of each is matched, whatever its name";
  EXPECT_EQ(v->effect, Effect::kRegression);
}

// A run interrupted before its program ended is no pass to regress from: the hang of a later run
// of the same program is coverage, and so is its summary.
TEST(ReportDiff, ARunNotFinishedOnOneSideIsCoverageNotARegression) {
  json a = report({a_case("exec", "skipped", {variant("exec", "subject", "ok", "skip")})});
  a["run"]["command"] = "exec";
  a["run"]["interrupted"] = true;
  json b = report({a_case("exec", "failed", {variant("exec", "subject", "ok", "hang")})}, false);
  b["run"]["command"] = "exec";
  const auto d = diff(a, b);
  EXPECT_FALSE(d.regressed) << fc::reports::diff_to_json(d, "a", "b").dump(2);
  const CaseChange* verdict = find_change(d, "verdict");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->effect, Effect::kCoverage);
  EXPECT_EQ(find_change(d, "summary"), nullptr);
  // The Python side of each run: another interpreter is named, first of what may explain it.
  a["run"]["environment"]["python"] = {{"python", {{"version", "3.11.2"}}}};
  b["run"]["environment"]["python"] = {{"python", {{"version", "3.6.15"}}}};
  const auto e = diff(a, b);
  ASSERT_FALSE(e.environment.empty());
  EXPECT_EQ(e.environment[0].name, "python.version");
  EXPECT_EQ(e.environment[0].a, "3.11.2");
  EXPECT_EQ(e.environment[0].b, "3.6.15");
}

TEST(ReportDiff, MarkdownStaysSmallWithManyChanges) {
  json a = report(json::array()), b = report(json::array());
  for (int i = 0; i < 3000; ++i) {
    a["cases"].push_back(a_case("case-" + std::to_string(i), "reproduced",
                                {variant("fix", "fix", "ok", "ok", std::string(300, 'x'))}));
    b["cases"].push_back(a_case("case-" + std::to_string(i), "regression",
                                {variant("fix", "fix", "ok", "hang", std::string(300, 'y'))}));
  }
  const auto d = diff(a, b);
  const std::string md = fc::reports::diff_markdown(d, "a/report.json", "b/report.json");
  EXPECT_LE(md.size(), fc::reports::kDiffMarkdownMaxBytes);
  EXPECT_NE(md.find("B regressed against A"), std::string::npos);
  EXPECT_NE(md.find("case-0"), std::string::npos);
  EXPECT_NE(md.find("more rows left out"), std::string::npos);
}

TEST(ReportDiff, JsonHasBothSidesTheChangesAndTheEnvironment) {
  json b = report({gomp("hang", "hang", "regression")}, false);
  b["run"]["environment"]["openmp_runtimes"] = {"libomp (LLVM) libomp.so.5"};
  const json j = fc::reports::diff_to_json(diff(report({gomp()}), b), "A.json", "B.json");
  EXPECT_EQ(j["a"]["path"], "A.json");
  EXPECT_EQ(j["b"]["command"], "run");
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["identical"], false);
  EXPECT_EQ(j["changes"][0]["case"], "hang-case");
  EXPECT_EQ(j["changes"][0]["effect"], "regression");
  EXPECT_EQ(j["environment"][0]["name"], "openmp_runtimes");
  EXPECT_EQ(j["environment"][0]["may_explain"][0], "hang-case/spawn");
  EXPECT_EQ(j["counts"]["environment"], 1);
}

}  // namespace
