// Runs keep their reports (harness/common/out_dir.h): without --out each run writes a folder of
// its own under forkcheck-report/, named by command and time, and forkcheck-report/latest points
// at the newest; an earlier run's folder is left as it was; bad input makes no folder; the last
// line printed says where the reports are.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
