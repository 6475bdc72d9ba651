// The run's files on disk (reports/file_io_posix.cc, run_log.cc, report_writer.cc): nothing is
// written through a symlink forkcheck did not make, reports are replaced in one step, and a new
// run removes exactly the files an earlier run left in its folder. POSIX: symlinks and getpid().
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/reporter.h"
#include "reports/run_log.h"

namespace fc::reports {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

class ReportFiles : public ::testing::Test {
 protected:
  // The run's folder, and beside it (outside it) a file of someone else's that links point to.
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("forkcheck-report-files-" + std::string(info->name()) +
                                         "-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    dir_ = root_ / "out";
    fs::create_directories(dir_);
    victim_ = root_ / "victim.txt";
    write(victim_, "precious\n");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }

  fs::path root_, dir_, victim_;
};

TEST_F(ReportFiles, RunLogReplacesASymlinkInsteadOfWritingThroughIt) {
  const fs::path log_path = dir_ / kRunLogFileName;
  fs::create_symlink(victim_, log_path);
  {
    RunLog log(log_path);
    log.append({{"type", "run"}});
  }
  EXPECT_EQ(slurp(victim_), "precious\n") << "the link's target was written through";
  EXPECT_FALSE(fs::is_symlink(log_path));
  EXPECT_EQ(slurp(log_path), "{\"type\":\"run\"}\n");
}

TEST_F(ReportFiles, RunLogReplacesAnOlderLog) {
  const fs::path log_path = dir_ / kRunLogFileName;
  write(log_path, "{\"type\":\"run\",\"old\":true}\n{\"type\":\"end\"}\n");
  {
    RunLog log(log_path);
    log.append({{"type", "run"}});
  }
  EXPECT_EQ(slurp(log_path), "{\"type\":\"run\"}\n");
}

TEST_F(ReportFiles, AtomicWritePassesOverTemporariesPlantedAtItsNames) {
  // Links at the temporary names this process would try first (PATH.tmp.PID, the name before
  // they were made unique, and PATH.tmp.PID.0 ...): O_EXCL passes over each.
  const fs::path path = dir_ / "report.json";
  const std::string pid = std::to_string(::getpid());
  std::vector<fs::path> planted = {dir_ / ("report.json.tmp." + pid)};
  for (int n = 0; n < 3; ++n)
    planted.push_back(dir_ / ("report.json.tmp." + pid + "." + std::to_string(n)));
  for (const auto& p : planted) fs::create_symlink(victim_, p);

  write_file_atomically(path, "{\"new\":true}\n");
  EXPECT_EQ(slurp(victim_), "precious\n") << "a planted temporary was written through";
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(slurp(path), "{\"new\":true}\n");
  for (const auto& p : planted) EXPECT_TRUE(fs::is_symlink(p)) << p << ": not ours to touch";
}

TEST_F(ReportFiles, AtomicWriteReplacesASymlinkAtTheDestinationItself) {
  const fs::path path = dir_ / "summary.md";
  fs::create_symlink(victim_, path);
  write_file_atomically(path, "# new\n");
  EXPECT_EQ(slurp(victim_), "precious\n");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(slurp(path), "# new\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u) << "no temporary left behind";
}

TEST_F(ReportFiles, RemoveRunFilesRemovesExactlyWhatARunWrites) {
  const std::vector<std::string> runs = {
      "run.jsonl",  "report.json",          "report.html",        "junit.xml",
      "summary.md", "report.json.tmp.4242", "junit.xml.tmp.17.0", "summary.md.tmp.x"};
  for (const auto& f : runs) write(dir_ / f, "earlier run\n");
  const fs::path link = dir_ / "report.html.tmp.99.1";  // a link is removed, its target is not
  fs::remove(dir_ / "report.html");
  fs::create_symlink(victim_, dir_ / "report.html");
  fs::create_symlink(victim_, link);

  const std::vector<std::string> others = {"notes.txt",    "bench.json",     "report.json.bak",
                                           "report.jsonl", "my-report.json", "report.json.tmp"};
  for (const auto& f : others) write(dir_ / f, "keep\n");
  fs::create_directories(dir_ / "watch-events");
  write(dir_ / "watch-events" / "report.json", "keep\n");
  fs::create_directories(root_ / "elsewhere");
  write(root_ / "elsewhere" / "report.json", "keep\n");
  fs::create_directory_symlink(root_ / "elsewhere", dir_ / "junit.xml.tmp.5.0");

  remove_run_files(dir_);

  for (const auto& f : runs) EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / f))) << f;
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "junit.xml.tmp.5.0"))) << "the link itself";
  EXPECT_EQ(slurp(victim_), "precious\n");
  EXPECT_EQ(slurp(root_ / "elsewhere" / "report.json"), "keep\n") << "a link was followed";
  for (const auto& f : others) EXPECT_EQ(slurp(dir_ / f), "keep\n") << f;
  EXPECT_EQ(slurp(dir_ / "watch-events" / "report.json"), "keep\n") << "not a run's file";
}

TEST_F(ReportFiles, RemoveRunFilesLeavesADirectoryOfARunFilesName) {
  fs::create_directories(dir_ / "report.json");
  write(dir_ / "report.json" / "inside", "keep\n");
  remove_run_files(dir_);
  EXPECT_EQ(slurp(dir_ / "report.json" / "inside"), "keep\n");
  EXPECT_NO_THROW(remove_run_files(root_ / "no-such-folder"));
}

}  // namespace
}  // namespace fc::reports
