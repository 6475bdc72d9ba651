// `forkcheck diff A B` from the outside, on a real run's report (FC_REAL_REPORT_DIR, written by
// the ctest fixture reports.real_run: gomp-fork-hang and tiny-nn-spawn) and copies of it edited
// the way another machine's run would differ.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "read_text.h"
#include "run_forkcheck.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kReal = FC_REAL_REPORT_DIR;

using fc::test_run::forkcheck;
using fc::test_run::Run;
using fc::test_text::slurp;
bool has(const std::string& text, const std::string& what) {
  return fc::test_text::contains(text, what);
}

class DiffCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("forkcheck-diff-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    real_ = json::parse(slurp(kReal / "report.json"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const json& report) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << report.dump(1);
    return p;
  }
  fs::path write_text(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  // The real report with gomp-fork-hang's verdict changed to a failing one, nothing else.
  json one_verdict_failing() const {
    json b = real_;
    for (auto& c : b["cases"])
      if (c["id"] == "gomp-fork-hang") c["verdict"] = "regression";
    return b;
  }

  fs::path dir_;
  json real_;
};

void expect_usage_error(const Run& r, const std::string& names) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, names)) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_EQ(r.out, "");
}

// The first check.
TEST_F(DiffCli, AReportAgainstItselfSaysNoDifferences) {
  const std::string report = (kReal / "report.json").string();
  const auto r = forkcheck({"diff", report, report});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "no differences")) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
  EXPECT_EQ(r.err, "");
}

// The second check: one verdict changed names that case, exit status 1.
TEST_F(DiffCli, ACopyWithOneVerdictFailingNamesThatCaseAndExits1) {
  const auto r = forkcheck(
      {"diff", (kReal / "report.json").string(), write("b.json", one_verdict_failing()).string()});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "REGRESSION  gomp-fork-hang")) << r.out;
  EXPECT_TRUE(has(r.out, "verdict: reproduced -> regression")) << r.out;
  EXPECT_FALSE(has(r.out, "tiny-nn-spawn")) << "it did not change\n" << r.out;
  EXPECT_TRUE(has(r.out, "B regressed against A in 1 case(s): gomp-fork-hang")) << r.out;
  EXPECT_FALSE(has(r.out, "\033[")) << "no colour into a pipe";
}

// The other way round, B is better: reported, exit status 0.
TEST_F(DiffCli, AnImprovementIsReportedAndExits0) {
  const auto r = forkcheck(
      {"diff", write("a.json", one_verdict_failing()).string(), (kReal / "report.json").string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "improved    gomp-fork-hang")) << r.out;
  EXPECT_TRUE(has(r.out, "B did not regress against A")) << r.out;
}

// The laptop and the cluster: the hazard no longer hangs where OpenMP has more threads and the
// kernel differs. The linked difference comes first and names the variant; the kernel after it.
TEST_F(DiffCli, TheEnvironmentDifferenceThatMayExplainAChangeComesFirst) {
  json b = real_;
  for (auto& c : b["cases"])
    if (c["id"] == "gomp-fork-hang")
      for (auto& v : c["variants"])
        if (v["name"] == "fork") v["outcome"] = "ok";
  json& env = b["run"]["environment"];
  ASSERT_TRUE(env.contains("threads")) << env.dump(1);
  const int threads = env["threads"].value("omp_get_max_threads", 1) + 7;
  env["threads"]["omp_get_max_threads"] = threads;
  env["os"]["kernel"] = "0.0.0-diff-test";
  const auto r = forkcheck({"diff", (kReal / "report.json").string(), write("b.json", b).string()});
  EXPECT_EQ(r.code, 0) << "a hazard that did not show is no regression\n" << r.out << r.err;
  const size_t linked = r.out.find("threads.omp_get_max_threads: ");
  const size_t unlinked = r.out.find("os.kernel: ");
  ASSERT_NE(linked, std::string::npos) << r.out;
  ASSERT_NE(unlinked, std::string::npos) << r.out;
  EXPECT_LT(linked, unlinked) << r.out;
  EXPECT_TRUE(has(r.out.substr(linked),
                  "-> " + std::to_string(threads) + "\n      may explain: gomp-fork-hang/fork"))
      << r.out;
  EXPECT_TRUE(has(r.out, "0.0.0-diff-test")) << r.out;
  EXPECT_FALSE(has(r.out, "caused")) << "a link, never a claim";
}

TEST_F(DiffCli, JsonParsesAndSaysWhatChanged) {
  const auto r = forkcheck({"diff", "--json", (kReal / "report.json").string(),
                            write("b.json", one_verdict_failing()).string()});
  EXPECT_EQ(r.code, 1) << r.err;
  const json j = json::parse(r.out);  // nothing else on stdout
  EXPECT_EQ(j["regressed"], true);
  ASSERT_EQ(j["changes"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["changes"][0]["case"], "gomp-fork-hang");
  EXPECT_EQ(j["changes"][0]["kind"], "verdict");
  EXPECT_EQ(j["changes"][0]["a"], "reproduced");
  EXPECT_EQ(j["changes"][0]["b"], "regression");
  EXPECT_TRUE(j["environment"].empty());
  const auto same = forkcheck(
      {"diff", "--json", (kReal / "report.json").string(), (kReal / "report.json").string()});
  EXPECT_EQ(same.code, 0);
  EXPECT_EQ(json::parse(same.out)["identical"], true);
}

TEST_F(DiffCli, MarkdownIsWrittenForATicket) {
  const fs::path md = dir_ / "diff.md";
  const auto r =
      forkcheck({"diff", (kReal / "report.json").string(),
                 write("b.json", one_verdict_failing()).string(), "--markdown", md.string()});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "wrote " + md.string())) << r.out;
  const std::string text = slurp(md);
  EXPECT_EQ(text.rfind("## forkcheck diff: B regressed against A", 0), 0u) << text;
  EXPECT_TRUE(has(text, "| **regression** | gomp-fork-hang verdict | reproduced | regression |"))
      << text;
  EXPECT_LT(text.size(), 65536u);
  // "-": on stdout instead, and nothing else there.
  const auto printed = forkcheck(
      {"diff", (kReal / "report.json").string(), (dir_ / "b.json").string(), "--markdown", "-"});
  EXPECT_EQ(printed.out, text);
}

// A run folder, the run log, and forkcheck-report/ through its latest link are all accepted.
TEST_F(DiffCli, RunFolderRunLogAndLatestAreAccepted) {
  const fs::path root = dir_ / "forkcheck-report";
  fs::create_directories(root / "run-20261123-120000");
  fs::copy_file(kReal / "report.json", root / "run-20261123-120000" / "report.json");
  fs::create_directory_symlink("run-20261123-120000", root / "latest");
  for (const auto& [a, b] : std::vector<std::pair<fs::path, fs::path>>{
           {kReal, root},
           {kReal / "run.jsonl", root / "latest"},
           {root / "run-20261123-120000", kReal / "report.json"}}) {
    const auto r = forkcheck({"diff", a.string(), b.string()});
    EXPECT_EQ(r.code, 0) << a << " " << b << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, "no differences")) << a << " " << b << "\n" << r.out;
  }
  // Through latest, the file it resolved to is named.
  const auto r = forkcheck({"diff", "--json", kReal.string(), root.string()});
  EXPECT_EQ(json::parse(r.out)["b"]["path"], (root / "latest" / "report.json").string());
}

TEST_F(DiffCli, BadInputIsOneLineAndExitStatus2) {
  const std::string real = (kReal / "report.json").string();
  const std::string missing = (dir_ / "nothere.json").string();
  expect_usage_error(forkcheck({"diff", real, missing}), "diff B " + missing + ": no such file");
  expect_usage_error(forkcheck({"diff", write_text("x.txt", "hello\n").string(), real}),
                     "is neither a forkcheck run log");
  json no_version = real_;
  no_version.erase("schema_version");
  expect_usage_error(forkcheck({"diff", real, write("nv.json", no_version).string()}),
                     "it has no schema_version");
  json v2 = real_;
  v2["schema_version"] = "2.0";
  expect_usage_error(forkcheck({"diff", write("v2.json", v2).string(), real}),
                     "diff A " + (dir_ / "v2.json").string() + ": schema_version 2.0 is newer");
  expect_usage_error(forkcheck({"diff", real, dir_.string()}),
                     "no report.json, run.jsonl or latest");
  // A program's run (exec) against the catalog's cases.
  json exec = real_;
  exec["run"]["command"] = "exec";
  exec["cases"] = json::array({json{
      {"id", "exec"},
      {"verdict", "ok"},
      {"variants",
       json::array({json{
           {"name", "exec"}, {"role", "subject"}, {"expected", "ok"}, {"outcome", "ok"}}})}}});
  expect_usage_error(forkcheck({"diff", real, write("exec.json", exec).string()}),
                     "compare two runs of the catalog, or two runs of a program");
  expect_usage_error(forkcheck({"diff", real}), "B is required");
  expect_usage_error(forkcheck({"diff", real, real, "--markdown", "-", "--json"}),
                     "both print on stdout");
}

TEST_F(DiffCli, HelpListsDiff) {
  const auto r = forkcheck({"help"});
  EXPECT_TRUE(has(r.out, "diff")) << r.out;
  const auto sub = forkcheck({"help", "diff"});
  EXPECT_EQ(sub.code, 0);
  EXPECT_TRUE(has(sub.out, "--markdown FILE")) << sub.out;
  expect_usage_error(forkcheck({"dif"}), "did you mean diff?");
}

}  // namespace
