// Runs keep their reports (harness/session/out_dir.h): without --out each run writes a folder of
// its own under forkcheck-report/, named by command and time, and forkcheck-report/latest points
// at the newest; an earlier run's folder is left as it was; bad input makes no folder; the last
// line printed says where the reports are. One live run per folder: a second run into a folder a
// live run holds is refused, and a run's report is built from its own records alone.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace {

namespace fs = std::filesystem;

class RunFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("forkcheck-run-folders-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // forkcheck ARGS, run in dir_ (no --out): its exit code; its stdout in out_.
  int forkcheck(const std::string& args) {
    fc::harness::LaunchSpec spec;
    spec.argv = {"/bin/sh", "-c", "cd '" + dir_.string() + "' && exec '" FC_FORKCHECK "' " + args};
    spec.timeout_s = 120;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    out_ = r.out.text();
    err_ = r.err.text();
    return r.exit.code;
  }
  std::vector<fs::path> run_folders() const {
    std::vector<fs::path> found;
    if (!fs::exists(dir_ / "forkcheck-report")) return found;
    for (const auto& e : fs::directory_iterator(dir_ / "forkcheck-report"))
      if (e.is_directory() && !e.is_symlink()) found.push_back(e.path());
    return found;
  }
  fs::path dir_;
  std::string out_, err_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// forkcheck ARGS started in the background, its stdout and stderr into `log`: its pid.
pid_t start_forkcheck(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    if (f) {
      ::dup2(::fileno(f), STDOUT_FILENO);
      ::dup2(::fileno(f), STDERR_FILENO);
    }
    std::vector<std::string> copy = args;
    std::vector<char*> argv = {const_cast<char*>(FC_FORKCHECK)};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(FC_FORKCHECK, argv.data());
    ::_exit(127);
  }
  return pid;
}

// Until the run writing into `folder` has really started (its run log has its case): whether it
// did within 60 s.
bool wait_for_run(const fs::path& folder) {
  for (int i = 0; i < 600; ++i) {
    if (slurp(folder / "run.jsonl").find("\"type\":\"case\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(RunFolders, EachRunKeepsItsOwnFolderAndLatestPointsAtTheNewest) {
  ASSERT_EQ(forkcheck("exec -- /bin/true"), 0) << out_ << err_;
  const auto first = run_folders();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].filename().string().rfind("exec-", 0), 0u) << first[0];
  const std::string first_report = first[0] / "report.json";
  ASSERT_TRUE(fs::exists(first_report));

  forkcheck("exec -- /bin/false");
  const auto both = run_folders();
  ASSERT_EQ(both.size(), 2u) << "the first run's folder is kept";
  EXPECT_TRUE(fs::exists(first_report));
  const fs::path latest = dir_ / "forkcheck-report" / "latest";
  ASSERT_TRUE(fs::is_symlink(latest));
  const fs::path newest = dir_ / "forkcheck-report" / fs::read_symlink(latest);
  EXPECT_NE(fs::canonical(newest), fs::canonical(first[0]));
  EXPECT_TRUE(fs::exists(latest / "report.json"));
  // The last line printed names the newest folder's issue.md.
  const std::string last = out_.substr(out_.rfind('\n', out_.size() - 2) + 1);
  EXPECT_NE(last.find("forkcheck-report/" + fs::read_symlink(latest).string() + "/issue.md"),
            std::string::npos)
      << last;
}

TEST_F(RunFolders, BadInputMakesNoFolder) {
  EXPECT_EQ(forkcheck("run no-such-case"), 2) << err_;
  EXPECT_EQ(forkcheck("exec -- /nonexistent/program"), 2) << err_;
  EXPECT_TRUE(run_folders().empty());
  EXPECT_FALSE(fs::exists(dir_ / "forkcheck-report" / "latest"));
}

// Two runs started together (likely in the same second) claim a folder each.
TEST_F(RunFolders, RunsStartedTogetherGetAFolderEach) {
  fc::harness::LaunchSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "cd '" + dir_.string() +
                   "' && ('" FC_FORKCHECK "' exec -- /bin/sleep 0.5 & '" FC_FORKCHECK
                   "' exec -- /bin/sleep 0.5 & wait)"};
  spec.timeout_s = 120;
  spec.channel = false;
  fc::harness::supervise(spec);
  const auto folders = run_folders();
  ASSERT_EQ(folders.size(), 2u);
  for (const auto& f : folders) EXPECT_TRUE(fs::exists(f / "report.json")) << f;
}

// Rendering the latest run again, into its own folder, leaves the link as it was.
TEST_F(RunFolders, ReportFromLatestLeavesLatestAlone) {
  ASSERT_EQ(forkcheck("exec -- /bin/true"), 0) << err_;
  const fs::path latest = dir_ / "forkcheck-report" / "latest";
  const fs::path target = fs::read_symlink(latest);
  EXPECT_EQ(forkcheck("report --from forkcheck-report/latest/report.json"), 0) << err_;
  ASSERT_TRUE(fs::is_symlink(latest));
  EXPECT_EQ(fs::read_symlink(latest), target);
}

TEST_F(RunFolders, AnExplicitOutIsUsedAsGiven) {
  ASSERT_EQ(forkcheck("exec --out mine -- /bin/true"), 0) << out_ << err_;
  EXPECT_TRUE(fs::exists(dir_ / "mine" / "issue.md"));
  EXPECT_FALSE(fs::exists(dir_ / "forkcheck-report"));
}

// Two runs into one --out at once: the second is refused (exit 2, one line naming the folder and
// the pid of the run that holds it) before it touches anything, and the first's report is whole
// and its own. Without the lock both appended to one run.jsonl, each printed the other's result,
// and one run's records were lost.
TEST_F(RunFolders, ASecondRunIntoAFolderALiveRunHoldsIsRefused) {
  const fs::path shared = dir_ / "shared";
  const pid_t first = start_forkcheck({"exec", "--out", shared.string(), "--", "/bin/sleep", "2"},
                                      dir_ / "first.log");
  ASSERT_TRUE(wait_for_run(shared)) << slurp(dir_ / "first.log");

  EXPECT_EQ(forkcheck("exec --out shared -- /bin/true"), 2) << out_ << err_;
  EXPECT_NE(err_.find("forkcheck: error: shared is in use by another forkcheck run"),
            std::string::npos)
      << err_;
  EXPECT_NE(err_.find("(pid " + std::to_string(first) + ")"), std::string::npos) << err_;
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << "one line: " << err_;
  EXPECT_EQ(out_, "") << "nothing run, nothing said of a run";

  EXPECT_EQ(exit_code(first), 0) << slurp(dir_ / "first.log");
  const std::string first_log = slurp(dir_ / "first.log");
  EXPECT_EQ(first_log.find("/bin/true"), std::string::npos)
      << "the other run's result: " << first_log;
  const auto report = nlohmann::json::parse(slurp(shared / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << slurp(shared / "report.json");
  EXPECT_EQ(report["run"]["argv"].back(), "2");
  ASSERT_EQ(report["cases"].size(), 1u);
  ASSERT_EQ(report["cases"][0]["variants"].size(), 1u);
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["description"], "/bin/sleep 2");
  EXPECT_EQ(v["outcome"], "ok");
  EXPECT_GE(v["duration_s"].get<double>(), 1.5);
  EXPECT_EQ(report["run"].value("complete", true), true);
  size_t variant_lines = 0;
  std::istringstream log(slurp(shared / "run.jsonl"));
  for (std::string line; std::getline(log, line);)
    variant_lines += line.find("\"type\":\"variant\"") != std::string::npos;
  EXPECT_EQ(variant_lines, 1u) << slurp(shared / "run.jsonl");
}

// The lock goes with the process, however it ends: a run killed with SIGKILL never blocks the next.
TEST_F(RunFolders, AKilledRunLeavesItsFolderFreeForTheNext) {
  const fs::path shared = dir_ / "shared";
  const pid_t first = start_forkcheck({"exec", "--out", shared.string(), "--", "/bin/sleep", "30"},
                                      dir_ / "first.log");
  ASSERT_TRUE(wait_for_run(shared)) << slurp(dir_ / "first.log");
  ::kill(first, SIGKILL);
  EXPECT_EQ(exit_code(first), 128 + SIGKILL);
  EXPECT_EQ(forkcheck("exec --out shared -- /bin/true"), 0) << out_ << err_;
  EXPECT_TRUE(fs::exists(shared / "report.json"));
}

// What else the run log may get (a stray writer, a second run before there were locks) is not
// the run's: the report is built from the run's own records.
TEST_F(RunFolders, TheReportIsBuiltFromTheRunsOwnRecordsAlone) {
  const fs::path shared = dir_ / "shared";
  const pid_t first = start_forkcheck({"exec", "--out", shared.string(), "--", "/bin/sleep", "2"},
                                      dir_ / "first.log");
  ASSERT_TRUE(wait_for_run(shared)) << slurp(dir_ / "first.log");
  {
    // After a MiB of empty lines (which a reader skips): the run's log is not opened to append,
    // and what it writes later would overwrite lines put right at its end.
    std::ofstream log(shared / "run.jsonl", std::ios::app);
    log << std::string(1 << 20, '\n')
        << R"({"type":"case","id":"intruder","title":"not this run's","variants":[]})"
        << "\n"
        << R"({"type":"variant","case":"exec","name":"exec","outcome":"crash","note":"not this run's","harness_error":true})"
        << "\n";
  }
  EXPECT_EQ(exit_code(first), 0) << slurp(dir_ / "first.log");
  const auto report = nlohmann::json::parse(slurp(shared / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["cases"].size(), 1u) << report["cases"].dump(1);
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "ok");
  EXPECT_FALSE(v.contains("note")) << v.dump(1);
  EXPECT_EQ(report["summary"]["harness_failures"], 0);
}

}  // namespace
