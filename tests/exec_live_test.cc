// `forkcheck exec` watching live (harness/console/live_console.h): the program's output reaches
// forkcheck's own output while the program runs; a stall of the whole tree is said at once, its
// stacks taken with the program left running, and kept in the report; --hang-after ends a stall
// as a hang; Ctrl-C keeps what was known; a Python program's stacks name its file and line.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"
#include "launch/process_tree.h"
#include "read_text.h"
#include "slow_debugger.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

using fc::test_text::contains;
using fc::test_text::slurp;

class ExecLive : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("forkcheck-exec-live-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = dir_ / "report";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // forkcheck exec OPTIONS -- COMMAND, watched from here: when each piece of its output came
  // (seconds from the start), and `on_text` called with all of its stderr so far.
  int exec(const std::vector<std::string>& options, const std::vector<std::string>& command,
           const std::function<void(const std::string& err_so_far)>& on_err = nullptr) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "exec", "--out", out_.string()};
    spec.argv.insert(spec.argv.end(), options.begin(), options.end());
    spec.argv.push_back("--");
    spec.argv.insert(spec.argv.end(), command.begin(), command.end());
    spec.timeout_s = 150;
    spec.channel = false;
    spec.collect_stacks = false;
    const auto start = Clock::now();
    spec.on_output = [&](int stream, const char* data, std::size_t n) {
      const double at = std::chrono::duration<double>(Clock::now() - start).count();
      std::string& all = stream == 1 ? out_text_ : err_text_;
      all.append(data, n);
      arrivals_.emplace_back(at, stream, all.size());
      if (stream == 2 && on_err) on_err(all);
    };
    auto r = fc::harness::supervise(spec);
    duration_s_ = r.duration_s;
    report_ = json::parse(slurp(out_ / "report.json"), nullptr, false);
    if (report_.is_object() && report_["cases"].size() == 1 &&
        report_["cases"][0]["variants"].size() == 1)
      v_ = report_["cases"][0]["variants"][0];
    return r.exit.code;
  }

  // When `what` first appeared in stream 1 or 2 (seconds from the start); -1: never.
  double arrived(int stream, const std::string& what) const {
    const std::string& all = stream == 1 ? out_text_ : err_text_;
    const auto at = all.find(what);
    if (at == std::string::npos) return -1;
    for (const auto& [t, s, size] : arrivals_)
      if (s == stream && size >= at + what.size()) return t;
    return -1;
  }

  fs::path dir_, out_;
  std::string out_text_, err_text_;
  std::vector<std::tuple<double, int, std::size_t>> arrivals_;
  double duration_s_ = 0;
  json report_, v_;
};

TEST_F(ExecLive, TheProgramsOutputComesWhileItRuns) {
  EXPECT_EQ(exec({"--timeout", "60"}, {FC_FAULT_CHILD, "print-sleep-print", "3"}), 0) << err_text_;
  const double first = arrived(1, "first\n"), second = arrived(1, "second\n");
  ASSERT_GE(first, 0) << out_text_;
  ASSERT_GE(second, 0) << out_text_;
  // It sleeps 3 s between its two lines: the first was shown before that, not at its end.
  EXPECT_LT(first, second - 2.0) << "first at " << first << " s, second at " << second << " s";
  EXPECT_EQ(v_["stdout"], "first\nsecond\n") << "and captured for the report";
}

TEST_F(ExecLive, QuietKeepsTheOutputForTheReportOnly) {
  EXPECT_EQ(exec({"--quiet", "--timeout", "60"}, {FC_FAULT_CHILD, "print-sleep-print", "0"}), 0);
  EXPECT_LT(arrived(1, "first\n"), 0) << out_text_;
  EXPECT_EQ(v_["stdout"], "first\nsecond\n");
}

// A deadlock under a 6 s deadline: said within a few seconds, its stacks taken then (both
// lockers named), and the program left to its deadline.
TEST_F(ExecLive, AStallIsSaidAtOnceAndTheProgramLeftRunning) {
  EXPECT_EQ(exec({"--timeout", "6"}, {FC_FAULT_CHILD, "deadlock"}), 1) << err_text_;
  const double stalled = arrived(2, "STALLED at");
  ASSERT_GE(stalled, 0) << err_text_;
  EXPECT_GE(arrived(2, "where it waits"), stalled) << err_text_;
  EXPECT_TRUE(contains(err_text_, "lock_a_then_b") || contains(err_text_, "pthread_mutex"))
      << err_text_;
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_EQ(v_["outcome"], "hang") << v_["message"];
  EXPECT_GE(v_["duration_s"].get<double>(), 6.0) << "waited for its deadline";
  ASSERT_TRUE(v_.contains("stall")) << v_.dump(1);
  // Said while the program ran: before time was called at its deadline.
  EXPECT_LT(v_["stall"]["after_s"].get<double>(), v_["watchdog"]["called_after_s"].get<double>())
      << v_.dump(1);
  EXPECT_EQ(v_["watchdog"].value("called_for", ""), "deadline");
  const std::string stall_stacks = v_["stall"]["stacks"].dump();
  EXPECT_TRUE(contains(stall_stacks, "lock_a_then_b")) << stall_stacks;
  EXPECT_TRUE(contains(stall_stacks, "lock_b_then_a")) << stall_stacks;
}

TEST_F(ExecLive, HangAfterEndsAStallAsAHang) {
  EXPECT_EQ(exec({"--timeout", "120", "--hang-after", "2"}, {FC_FAULT_CHILD, "hang"}), 1);
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_EQ(v_["outcome"], "hang") << v_["message"];
  EXPECT_EQ(v_["watchdog"].value("called_for", ""), "stall") << "not its 120 s deadline";
  EXPECT_FALSE(v_["watchdog"]["deadline_passed"].get<bool>());
  EXPECT_TRUE(contains(v_["message"].get<std::string>(), "still for")) << v_["message"];
}

TEST_F(ExecLive, HangAfterNeedsAStallWindow) {
  EXPECT_EQ(exec({"--hang-after", "0.2"}, {FC_FAULT_CHILD, "exit", "0"}), 2) << err_text_;
  EXPECT_TRUE(contains(err_text_, "--hang-after")) << err_text_;
}

// Ctrl-C once the stall's stacks are in: the report is written, with those stacks, and what
// the stall proved (a process that can never go on by itself) gets its fix, as a hang's would;
// the program is "not finished", never a catalog "skip".
TEST_F(ExecLive, InterruptedDuringAStallKeepsItsStacks) {
  bool sent = false;
  exec({"--timeout", "120"}, {FC_FAULT_CHILD, "deadlock"}, [&](const std::string& err) {
    // Once the stall's stacks are in and a process is proven stuck (under load the whole tree
    // may be seen still before either locker's own window has passed).
    if (sent || !contains(err, "where it waits") || !contains(err, "can never go on by itself"))
      return;
    for (int pid : fc::launch::child_processes(::getpid())) ::kill(pid, SIGINT);  // forkcheck
    sent = true;
  });
  ASSERT_TRUE(sent) << err_text_;
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_TRUE(v_.value("interrupted", false)) << v_.dump(1);  // ended by it, not its deadline
  EXPECT_TRUE(contains(v_["stacks"].dump(), "lock_a_then_b")) << v_.dump(1);
  ASSERT_TRUE(v_["stall"].contains("process")) << v_["stall"].dump(1);
  const std::string issue = slurp(out_ / "issue.md");
  EXPECT_TRUE(contains(issue, "## forkcheck: exec: not finished: forkcheck was interrupted"))
      << issue;
  EXPECT_TRUE(contains(issue, "**Fix:** pid " +
                                  std::to_string(v_["stall"]["process"]["pid"].get<int>()) +
                                  "'s threads all wait on locks private to the process"))
      << issue;
  EXPECT_TRUE(contains(out_text_, "FIX: ")) << out_text_;
}

TEST_F(ExecLive, AnUnendedLastLineIsEndedBeforeForkchecksOwn) {
  EXPECT_EQ(exec({"--timeout", "60"}, {"/usr/bin/printf", "abc"}), 0) << err_text_;
  EXPECT_TRUE(contains(out_text_, "abc\nthe program ended in")) << out_text_;
}

// Stall stacks that take long never hold up a program that ended, nor its deadline.
TEST_F(ExecLive, SlowStallStacksHoldUpNeitherTheProgramsEndNorItsDeadline) {
  fc::harness::SlowDebugger debugger(40, "slow eu-stack: gave up");
  EXPECT_EQ(exec({"--timeout", "60"}, {FC_FAULT_CHILD, "pause-alarm", "3"}), 0) << err_text_;
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_EQ(v_["outcome"], "ok") << v_["message"];
  EXPECT_LT(v_["duration_s"].get<double>(), 40.0) << "it waited 3 s; the stall's debugger 40 s";
  EXPECT_TRUE(contains(err_text_, "STALLED at")) << err_text_;

  EXPECT_EQ(exec({"--timeout", "4"}, {FC_FAULT_CHILD, "hang"}), 1) << err_text_;
  EXPECT_EQ(v_["outcome"], "hang") << v_["message"];
  EXPECT_TRUE(contains(v_["message"].get<std::string>(), "4.0 s deadline")) << v_["message"];
  // Time was called at the deadline (not when the 40 s debugger gave up): what the tree was
  // doing is as of then.
  EXPECT_EQ(v_["watchdog"].value("called_for", ""), "deadline") << v_["watchdog"].dump();
  EXPECT_LT(v_["watchdog"]["called_after_s"].get<double>(), 40.0) << v_["watchdog"].dump();
}

// The interpreter with CPython's gdb extension, or "" (with why) when this machine has none.
std::string python_with_gdb_extension(std::string& why) {
  const char* python = "/usr/bin/python3";
  char real[PATH_MAX];
  if (!::realpath(python, real)) {
    why = "no /usr/bin/python3";
    return "";
  }
  if (std::system("command -v gdb >/dev/null 2>&1") != 0) {
    why = "gdb is not installed";
    return "";
  }
  const std::string ext = "/usr/share/gdb/auto-load" + std::string(real) + "-gdb.py";
  if (!fs::exists(ext)) {
    why = ext + " is missing (python3-dbg is not installed; ci/install-deps-debian.sh installs it)";
    return "";
  }
  return python;
}

// A Python program that only waits (in sigwait(), for a timer's signal) is asleep, not stuck: its
// stall is said, its native stacks taken in a blink (eu-stack) and its Python frames given by the
// program itself (the bootstrap's faulthandler), and gdb, which would stop it for seconds to read
// them (17 s for a `time.sleep(3)` with torch loaded, before), is not let near it.
TEST_F(ExecLive, LookingAtASleepingPythonProgramDoesNotStopItForGdb) {
  std::string why;
  const std::string python = python_with_gdb_extension(why);
  if (python.empty()) GTEST_SKIP() << why;
  const fs::path script = dir_ / "sleeps.py";
  // The alarm set in native code (libc's alarm()), which the bootstrap does not see: the tree
  // is still, not sleeping until a known alarm, and the stall is looked at.
  std::ofstream(script) << "import ctypes, ctypes.util, signal\n"
                           "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM}); "
                           "ctypes.CDLL(ctypes.util.find_library('c')).alarm(3)\n"
                           "signal.sigwait({signal.SIGALRM})\n";
  EXPECT_EQ(exec({}, {python, script.string()}), 0) << err_text_;
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_EQ(v_["outcome"], "ok");
  EXPECT_TRUE(contains(err_text_, "STALLED at")) << err_text_;
  ASSERT_TRUE(v_.contains("stall")) << v_.dump(1);
  const std::string method = v_["stall"].value("stacks_method", "");
  EXPECT_TRUE(contains(method, "faulthandler")) << v_["stall"].dump(1);
  EXPECT_FALSE(contains(method, "gdb")) << v_["stall"].dump(1);
  EXPECT_TRUE(contains(v_["stall"]["stacks"].dump(), "sleeps.py")) << v_["stall"].dump(1);
  EXPECT_TRUE(contains(err_text_, "sleeps.py:3 in <module>")) << err_text_;
  std::fprintf(stderr, "    signal.sigwait() for 3 s under exec took %.2f s\n",
               v_["duration_s"].get<double>());
}

TEST_F(ExecLive, APythonProgramsStacksNameItsFileLineAndFunction) {
  std::string why;
  const std::string python = python_with_gdb_extension(why);
  if (python.empty()) GTEST_SKIP() << why;
  const fs::path script = dir_ / "waits.py";
  std::ofstream(script) << "import threading\n"
                           "\n"
                           "def wait_here():\n"
                           "    threading.Event().wait()\n"
                           "\n"
                           "wait_here()\n";
  EXPECT_EQ(exec({"--timeout", "120", "--hang-after", "2"}, {python, script.string()}), 1);
  ASSERT_TRUE(v_.is_object()) << out_text_ << err_text_;
  EXPECT_EQ(v_["outcome"], "hang") << v_["message"];
  bool found = false;
  for (const auto& t : v_["stacks"])
    for (const auto& f : t.value("python", json::array()))
      found = found || (f.value("file", "") == script.string() && f.value("line", 0) == 4 &&
                        f.value("function", "") == "wait_here");
  EXPECT_TRUE(found) << v_.value("stacks_python_note", "") << "\n" << v_["stacks"].dump(1);
  // Said on the terminal: under "where it waits" once the stall's stacks are in, or in the closing
  // finding when --hang-after called time first.
  EXPECT_TRUE(contains(err_text_ + out_text_, "waits.py:4 in wait_here")) << err_text_ << out_text_;
  for (const char* file : {"report.html", "summary.md", "junit.xml"})
    EXPECT_TRUE(contains(slurp(out_ / file), "waits.py:4")) << file;
}

}  // namespace
