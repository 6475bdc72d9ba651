// `forkcheck report --from` and `forkcheck env` from the outside, on a real run's reports
// (FC_REAL_REPORT_DIR, written by the ctest fixture reports.real_run).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include "read_text.h"
#include "run_forkcheck.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kReal = FC_REAL_REPORT_DIR;
const char* const kFiles[] = {"report.json", "report.html", "junit.xml", "summary.md", "issue.md"};

using fc::test_run::forkcheck;
using fc::test_run::Run;
using fc::test_text::slurp;

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() /
           ("forkcheck-report-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

void expect_usage_error(const Run& r, const std::string& names) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(RealReport, HasEveryFile) {
  for (const char* f : kFiles) EXPECT_GT(fs::file_size(kReal / f), 100u) << f;
}

// What a ticket takes: issue.md under 10 KB, summary.md within a GitHub comment's 65,536
// characters (a character is at least a byte), both leading with the finding.
TEST(RealReport, IssueAndSummaryFitATicket) {
  const std::string issue = slurp(kReal / "issue.md");
  EXPECT_LT(issue.size(), 10u * 1000u);
  EXPECT_EQ(issue.rfind("## forkcheck: ", 0), 0u) << issue.substr(0, 200);
  EXPECT_NE(issue.find("### Environment"), std::string::npos);
  EXPECT_NE(issue.find("forkcheck run gomp-fork-hang tiny-nn-spawn"), std::string::npos)
      << "the exact command line";
  EXPECT_LE(slurp(kReal / "summary.md").size(), 65536u);
}

// The OpenMP runtime the repro programs load here (repros/cases/CMakeLists.txt): GCC's, or
// LLVM's on macOS.
#ifdef __APPLE__
constexpr const char* kOpenMpRuntime = "libomp";
#else
constexpr const char* kOpenMpRuntime = "libgomp";
#endif

TEST(RealReport, EnvironmentNamesLibtorchAndTheOpenMpRuntime) {
  const json r = json::parse(slurp(kReal / "report.json"));
  const json& env = r["run"]["environment"];
  ASSERT_TRUE(env.is_object()) << r["run"].dump(2);
  ASSERT_FALSE(env.contains("error")) << env["error"];
  EXPECT_FALSE(env["libtorch"]["version"].get<std::string>().empty());
  EXPECT_NE(env["libtorch"]["config"].get<std::string>().find("PyTorch built with"),
            std::string::npos);
  EXPECT_NE(env["openmp_runtimes"].dump().find(kOpenMpRuntime), std::string::npos)
      << env["openmp_runtimes"];
  EXPECT_NE(env["collected_by"]["program"].get<std::string>().find("forkcheck-repro-torch"),
            std::string::npos);
  const std::string html = slurp(kReal / "report.html");
  EXPECT_NE(html.find(env["libtorch"]["version"].get<std::string>()), std::string::npos);
}

TEST(RealReport, JunitHasOneTestcasePerVariantAndFailsOnlyMismatches) {
  const json r = json::parse(slurp(kReal / "report.json"));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file((kReal / "junit.xml").c_str()));
  size_t testcases = 0, failing = 0;
  for (auto s : doc.child("testsuites").children("testsuite"))
    for (auto t : s.children("testcase")) {
      ++testcases;
      if (t.child("failure") || t.child("error")) ++failing;
    }
  EXPECT_EQ(testcases, r["summary"]["variants"].get<size_t>());
  EXPECT_EQ(failing, r["summary"]["mismatches"].get<size_t>());
}

TEST(ReportFrom, RunLogRendersTheSameReports) {
  auto out = fresh_dir("from-log");
  auto r = forkcheck({"report", "--from", (kReal / "run.jsonl").string(), "--out", out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(slurp(out / "report.json")), json::parse(slurp(kReal / "report.json")));
  for (const char* f : {"report.html", "junit.xml", "summary.md"})
    EXPECT_EQ(slurp(out / f), slurp(kReal / f)) << f << " is a pure function of the run log";
  fs::remove_all(out);
}

TEST(ReportFrom, ReportJsonRendersTheSameReports) {
  auto out = fresh_dir("from-json");
  auto r = forkcheck({"report", "--from", (kReal / "report.json").string(), "--out", out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : kFiles) EXPECT_EQ(slurp(out / f), slurp(kReal / f)) << f;
  fs::remove_all(out);
}

TEST(ReportFrom, WritesBesideTheFileByDefault) {
  auto dir = fresh_dir("beside");
  fs::create_directories(dir);
  fs::copy_file(kReal / "run.jsonl", dir / "run.jsonl");
  auto r = forkcheck({"report", "--from", (dir / "run.jsonl").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : kFiles) EXPECT_TRUE(fs::exists(dir / f)) << f;
  fs::remove_all(dir);
}

TEST(ReportFrom, MissingFileIsAUsageError) {
  auto out = fresh_dir("missing-out");
  const std::string missing = (fresh_dir("missing") / "run.jsonl").string();
  expect_usage_error(forkcheck({"report", "--from", missing, "--out", out.string()}), missing);
  EXPECT_FALSE(fs::exists(out));
}

TEST(ReportFrom, DirectoryIsAUsageError) {
  expect_usage_error(forkcheck({"report", "--from", kReal.string()}), kReal.string());
}

TEST(ReportFrom, FileThatIsNoRunIsAUsageError) {
  auto f = fresh_dir("garbage");
  { std::ofstream(f) << "hello\n{\"not\": \"a run\"}\n"; }
  expect_usage_error(forkcheck({"report", "--from", f.string()}), "neither");
  fs::remove(f);
}

// A saved report or run log whose fields have other types than forkcheck writes is the user's
// input that forkcheck cannot read: one line naming the field, exit status 2, for report and diff
// alike, never a raw nlohmann exception.
TEST(ReportFrom, FieldsOfTheWrongTypesAreNamedInOneLine) {
  const auto dir = fresh_dir("types");
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> saved = {
      {"report.json", R"({"schema_version":"1.0","run":"x","cases":[]})"},
      {"report.json", R"({"schema_version":"1.0","run":{"interrupted":"no"},"cases":[]})"},
      {"report.json", R"({"schema_version":"1.0","summary":{"ok":"yes"},"cases":[]})"},
      {"report.json",
       R"({"schema_version":"1.0","cases":[{"id":"x","variants":[{"name":"a","outcome":4}]}]})"},
      {"run.jsonl", "{\"type\":7}\n"},
      {"run.jsonl", "{\"type\":\"run\",\"environment\":3}\n{\"type\":\"end\"}\n"},
      {"run.jsonl", "{\"type\":\"run\"}\n{\"type\":\"end\",\"interrupted\":\"no\"}\n"},
  };
  const std::vector<std::string> names = {
      R"("run" is a string ("x"), not an object)",
      R"(run: "interrupted" is a string ("no"), not a boolean)",
      R"(summary: "ok" is a string ("yes"), not a boolean)",
      R"(cases[0]: variants[0]: "outcome" is a number (4), not a string)",
      R"(record 1: "type" is a number (7), not a string)",
      R"(record 1: "environment" is a number (3), not an object)",
      R"(record 2: "interrupted" is a string ("no"), not a boolean)"};
  for (size_t i = 0; i < saved.size(); ++i) {
    SCOPED_TRACE(saved[i].second);
    const fs::path file = dir / saved[i].first;
    std::ofstream(file) << saved[i].second;
    expect_usage_error(
        forkcheck({"report", "--from", file.string(), "--out", (dir / "out").string()}), names[i]);
    expect_usage_error(forkcheck({"diff", file.string(), file.string()}), names[i]);
    fs::remove(file);
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "report.html"));
  fs::remove_all(dir);
}

TEST(ReportFrom, FromIsRequired) { expect_usage_error(forkcheck({"report"}), "--from"); }

TEST(Env, PrintsTheFingerprintForAPerson) {
  auto r = forkcheck({"env"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"libtorch", kOpenMpRuntime, "OpenMP runtime(s) loaded",
                        "start methods here", "fork, spawn, forkserver", "CUDA", "libc"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
#ifdef __linux__
  for (const char* s : {"Yama ptrace_scope", "glibc"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
#endif
}

TEST(Env, JsonComesFromTheTorchProgram) {
  auto r = forkcheck({"env", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json env = json::parse(r.out);
  EXPECT_FALSE(env["libtorch"]["version"].get<std::string>().empty());
  EXPECT_GE(env["threads"]["nproc"].get<int>(), 1);
  EXPECT_FALSE(env["collected_by"].contains("fallback"));
}

TEST(Env, FallsBackToTheNativeProgramAndSaysSo) {
  // A repro directory whose torch program fails: the native one answers, without libtorch.
  auto dir = fresh_dir("fallback");
  fs::create_directories(dir);
  fs::create_symlink(fs::path(FC_FORKCHECK).parent_path() / "forkcheck-repro",
                     dir / "forkcheck-repro");
  {
    std::ofstream(dir / "forkcheck-repro-torch")
        << "#!/bin/sh\necho 'libtorch is broken here' >&2\nexit 3\n";
  }
  fs::permissions(dir / "forkcheck-repro-torch", fs::perms::owner_all);
  auto r = forkcheck({"env", "--json"}, {{"FORKCHECK_REPRO_DIR", dir.string()}});
  ASSERT_EQ(r.code, 0) << r.err;
  const json env = json::parse(r.out);
  EXPECT_FALSE(env.contains("libtorch"));
  const std::string why = env["collected_by"]["fallback"].get<std::string>();
  EXPECT_NE(why.find("forkcheck-repro-torch"), std::string::npos) << why;
  EXPECT_NE(why.find("libtorch is broken here"), std::string::npos) << why;
  EXPECT_NE(env["openmp_runtimes"].dump().find(kOpenMpRuntime), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
