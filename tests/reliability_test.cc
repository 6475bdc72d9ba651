// forkcheck under faults of its own: interrupted by SIGINT/SIGTERM mid-run, killed by SIGKILL
// mid-run. Each test checks the outcome, the timing, and that nothing the run started is alive.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slow_debugger.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// forkcheck started by hand, so the test can read its progress as it comes and signal it.
struct Forkcheck {
  pid_t pid = -1;
  int out = -1;
  std::string seen;

  explicit Forkcheck(const std::vector<std::string>& args) {
    int p[2];
    EXPECT_EQ(::pipe(p), 0);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(p[1], STDOUT_FILENO);
      ::close(p[0]);
      ::close(p[1]);
      std::vector<char*> argv;
      std::string exe = FC_FORKCHECK;
      argv.push_back(exe.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(p[1]);
    out = p[0];
  }
  ~Forkcheck() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out >= 0) ::close(out);
  }

  // Reads stdout until `n` progress lines were printed or `seconds` passed.
  bool wait_progress_lines(size_t n, double seconds) {
    auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
      size_t lines = 0;
      for (size_t p = 0; (p = seen.find("(expected", p)) != std::string::npos; ++p) ++lines;
      if (lines >= n) return true;
      pollfd pfd{out, POLLIN, 0};
      if (::poll(&pfd, 1, 100) > 0) {
        char buf[4096];
        ssize_t k = ::read(out, buf, sizeof buf);
        if (k <= 0) return false;
        seen.append(buf, static_cast<size_t>(k));
      }
    }
    return false;
  }

  // Waits for forkcheck to exit; returns its raw wait status, or -1 after `seconds`.
  int wait_exit(double seconds) {
    auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
      char buf[4096];
      pollfd pfd{out, POLLIN, 0};
      if (::poll(&pfd, 1, 20) > 0) {
        ssize_t k = ::read(out, buf, sizeof buf);
        if (k > 0) seen.append(buf, static_cast<size_t>(k));
      }
    }
    return -1;
  }
};

// Processes whose environment carries the run token of forkcheck `pid` (what its runs started).
std::vector<int> started_by(pid_t pid) {
  const std::string prefix = "FORKCHECK_RUN=fc-" + std::to_string(pid) + "-";
  std::vector<int> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string s;
    std::getline(stat, s);
    auto close = s.rfind(')');
    if (close == std::string::npos || s.substr(close + 2, 1) == "Z") continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string var;
    while (std::getline(env, var, '\0'))
      if (var.compare(0, prefix.size(), prefix) == 0) found.push_back(std::stoi(name));
  }
  return found;
}

bool wait_for_exe_in_run(pid_t forkcheck_pid, const std::string& exe, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    for (int p : started_by(forkcheck_pid)) {
      std::error_code ec;
      if (fs::read_symlink("/proc/" + std::to_string(p) + "/exe", ec) == fs::path(exe)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void expect_nothing_left(pid_t forkcheck_pid) {
  auto until = Clock::now() + std::chrono::seconds(5);
  std::vector<int> left;
  while (!(left = started_by(forkcheck_pid)).empty() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the run are still alive, e.g. pid "
                            << (left.empty() ? 0 : left[0]);
}

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("forkcheck-rel-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

TEST(Interrupt, SigintEndsExecKillsTheTreeAndWritesAPartialReport) {
  auto out = fresh_dir("sigint-exec");
  Forkcheck fc(
      {"exec", "--out", out.string(), "--timeout", "120", "--", FC_FAULT_CHILD, "ignore-term"});
  pid_t pid = fc.pid;
  // Interrupt while the command runs (not while forkcheck is still starting up).
  ASSERT_TRUE(wait_for_exe_in_run(pid, FC_FAULT_CHILD, 60));
  auto t0 = Clock::now();
  ::kill(pid, SIGINT);
  int status = fc.wait_exit(60);  // without the interrupt, it would run to its 120 s deadline
  double took = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "SIGINT to forkcheck's exit: %.2f s\n", took);
  ASSERT_NE(status, -1) << "forkcheck did not end after SIGINT";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["run"]["interrupted"], true);
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "skip");
  EXPECT_EQ(v["interrupted"], true);
  EXPECT_NE(
      v["message"].get<std::string>().find("not finished: forkcheck was interrupted by SIGINT"),
      std::string::npos)
      << v["message"];
  expect_nothing_left(pid);
  fs::remove_all(out);
}

// Ctrl-C once the deadline passed and the stacks of the hang are being taken: the hang stays a
// hang (it was called before the interrupt), forkcheck ends without waiting for the debugger,
// the report says it was interrupted.
TEST(Interrupt, SigintAfterTheDeadlineKeepsTheHangAndDoesNotWaitForTheStacks) {
  auto out = fresh_dir("sigint-after-deadline");
  fc::harness::SlowDebugger debugger(30, "never seen");
  Forkcheck fc({"exec", "--out", out.string(), "--timeout", "1", "--", FC_FAULT_CHILD, "hang"});
  // The moment the debugger started: time was called, the stacks are under way.
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (debugger.runs() == 0 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(debugger.runs(), 1) << "the deadline's stacks never began";
  const auto t0 = Clock::now();
  ::kill(fc.pid, SIGINT);
  const int status = fc.wait_exit(60);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "SIGINT to forkcheck's exit: %.2f s\n", took);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(debugger.times("end").empty()) << "forkcheck waited for the 30 s debugger to end";
  const auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["run"]["interrupted"], true);
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "hang") << v["message"];
  expect_nothing_left(fc.pid);
  fs::remove_all(out);
}

// A process's state letter (R, S, T...), or '?' when it is gone.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  std::getline(stat, s);
  const auto close = s.rfind(')');
  return close == std::string::npos || close + 2 >= s.size() ? '?' : s[close + 2];
}

// Ctrl-Z (SIGTSTP) stops forkcheck and the program with it; while both are stopped the deadline
// does not run, and once continued the program ends by itself within it.
TEST(Stop, CtrlZStopsTheProgramWithForkcheckAndTheDeadlineWaits) {
  auto out = fresh_dir("ctrl-z");
  // A 2 s sleep within a 3 s deadline, stopped for 4 s in between: it ends when continued, past
  // the deadline unless the stop is not counted. (Not CPU work: on a loaded machine its wall time
  // would say nothing about the stop.)
  Forkcheck fc(
      {"exec", "--out", out.string(), "--timeout", "3", "--", FC_FAULT_CHILD, "sleep", "2"});
  ASSERT_TRUE(wait_for_exe_in_run(fc.pid, FC_FAULT_CHILD, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(fc.pid, SIGTSTP);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(state_of(fc.pid), 'T') << "forkcheck stopped";
  const auto program = started_by(fc.pid);
  bool program_stopped = false;
  for (int p : program) {
    std::error_code ec;
    if (fs::read_symlink("/proc/" + std::to_string(p) + "/exe", ec) == fs::path(FC_FAULT_CHILD))
      program_stopped = state_of(p) == 'T';
  }
  EXPECT_TRUE(program_stopped) << "the program must stop with forkcheck";
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  ::kill(fc.pid, SIGCONT);
  const int status = fc.wait_exit(30);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << fc.seen;
  const auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "ok") << v["message"];
  EXPECT_GE(v["watchdog"].value("paused_s", 0.0), 3.5);
  fs::remove_all(out);
}

// Runs `shell` (sh -c) and returns its exit status.
int sh(const std::string& shell) {
  const int status = std::system(shell.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The program gets the caller's stdin: a pipe as it is, a terminal through a relay (the program
// runs in a process group of its own, which may not read the terminal itself).
TEST(Stdin, TheProgramReadsTheCallersStdin) {
  auto out = fresh_dir("stdin");
  const std::string fc = FC_FORKCHECK;
  EXPECT_EQ(sh("printf 'exit 3\\n' | " + fc + " exec --out " + out.string() + " -- sh >/dev/null"),
            1);
  auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["cases"][0]["variants"][0]["outcome"], "error");
  EXPECT_EQ(report["cases"][0]["variants"][0]["exit"]["code"], 3);
  if (sh("command -v script >/dev/null") != 0) GTEST_SKIP() << "no script(1) to make a terminal";
  // On a terminal (script's): a line typed reaches `head -1`, which ends by itself.
  EXPECT_EQ(sh("(sleep 1; printf 'typed\\n') | script -qec '" + fc + " exec --timeout 20 --out " +
               out.string() + " -- head -1' /dev/null >/dev/null"),
            0);
  report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  const auto& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "ok") << v["message"];
  EXPECT_NE(v["stdout"].get<std::string>().find("typed"), std::string::npos) << v["stdout"];
  fs::remove_all(out);
}

TEST(Interrupt, SigtermMidRunKeepsTheVariantsFinishedSoFar) {
  auto out = fresh_dir("sigterm-all");
  Forkcheck fc({"all", "--jobs", "1", "--out", out.string()});
  ASSERT_TRUE(fc.wait_progress_lines(2, 120)) << fc.seen;
  pid_t pid = fc.pid;
  auto t0 = Clock::now();
  ::kill(pid, SIGTERM);
  int status = fc.wait_exit(60);  // the whole catalog, one variant at a time, would take minutes
  double took = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "SIGTERM to forkcheck's exit: %.2f s\n", took);
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["run"]["interrupted"], true);
  size_t finished = 0, not_finished = 0;
  for (const auto& c : report["cases"])
    for (const auto& v : c["variants"]) {
      if (v.value("interrupted", false) || v.value("not_run", false))
        ++not_finished;
      else
        ++finished;
    }
  EXPECT_GE(finished, 2u);
  EXPECT_GE(not_finished, 1u);
  expect_nothing_left(pid);
  fs::remove_all(out);
}

// Ctrl-C early in `forkcheck all`: it ends within 2 s with the report written and marked
// interrupted, and the variants it never started are "not run": never a REGRESSION line on the
// terminal (it printed 42 of them for variants that never ran), never a mismatch, a regression or
// a failure in the reports.
TEST(Interrupt, SigintEarlyInAllEndsTheRunAndCallsWhatNeverRanNotRun) {
  auto out = fresh_dir("sigint-all");
  Forkcheck fc({"all", "--out", out.string()});
  // A few variants in: the rest are running or still to start.
  ASSERT_TRUE(fc.wait_progress_lines(8, 120)) << fc.seen;
  const pid_t pid = fc.pid;
  const size_t seen_before = fc.seen.size();
  const auto t0 = Clock::now();
  ::kill(pid, SIGINT);
  const int status = fc.wait_exit(30);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "SIGINT to forkcheck's exit: %.2f s\n", took);
  ASSERT_NE(status, -1) << "forkcheck did not end after SIGINT";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string after = fc.seen.substr(seen_before);
  EXPECT_EQ(fc.seen.find("REGRESSION"), std::string::npos) << fc.seen;
  EXPECT_EQ(after.find("differs"), std::string::npos) << after;
  EXPECT_NE(after.find("  not run"), std::string::npos) << after;

  auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["run"]["interrupted"], true);
  size_t not_run = 0, mismatched = 0;
  for (const auto& c : report["cases"])
    for (const auto& v : c["variants"]) {
      const bool unfinished = v.value("not_run", false) || v.value("interrupted", false);
      if (v.value("not_run", false)) {
        ++not_run;
        EXPECT_EQ(v["outcome"], "skip") << v.dump(1);
        EXPECT_EQ(v["interrupted"], true) << v.dump(1);
        EXPECT_EQ(v["message"].get<std::string>().rfind("not run: ", 0), 0u) << v["message"];
      }
      if (!unfinished && v["outcome"] != v["expected"]) ++mismatched;
    }
  EXPECT_GE(not_run, 10u) << "most of the 81 variants never started";
  EXPECT_EQ(report["summary"]["mismatches"], mismatched) << "what never ran is no mismatch";
  for (const auto& c : report["cases"])
    EXPECT_NE(c["verdict"], "regression") << c["id"] << ": " << c["verdict_reason"];
  std::ifstream junit(out / "junit.xml");
  std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_EQ(xml.find("not run: forkcheck was interrupted by SIGINT before it started\" type"),
            std::string::npos)
      << "a variant never run is no JUnit failure or error";
  expect_nothing_left(pid);
  fs::remove_all(out);
}

// Ctrl-C while forkcheck waits for a zygote to get ready (libtorch loading on a busy machine, or
// from a cold network file system, takes tens of seconds): the wait stops at once, it does not
// run its minute out (it did, once per repro program, and restarted after each signal).
TEST(Interrupt, SigintWhileAZygoteLoadsEndsWithoutWaitingForIt) {
  auto dir = fresh_dir("slow-zygote");
  fs::create_directories(dir);
  const fs::path marker = dir / "loading";
  fs::create_symlink(fs::path(FC_FORKCHECK).parent_path() / "forkcheck-repro",
                     dir / "forkcheck-repro");
  std::ofstream(dir / "forkcheck-repro-torch")
      << "#!/bin/sh\n[ \"$1\" = --zygote ] && touch '" << marker.string()
      << "' && exec sleep 60\nexec '"
      << (fs::path(FC_FORKCHECK).parent_path() / "forkcheck-repro-torch").string() << "' \"$@\"\n";
  fs::permissions(dir / "forkcheck-repro-torch", fs::perms::owner_all);
  ::setenv("FORKCHECK_REPRO_DIR", dir.c_str(), 1);
  Forkcheck fc({"run", "gomp-fork-hang", "--out", (dir / "out").string()});
  ::unsetenv("FORKCHECK_REPRO_DIR");
  for (int i = 0; i < 600 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(marker)) << "the zygote never started";
  const pid_t pid = fc.pid;
  const auto t0 = Clock::now();
  ::kill(pid, SIGINT);
  // The zygote's wait is a minute, and this zygote sleeps that long: ended within half of it,
  // forkcheck did not wait for the zygote.
  const int status = fc.wait_exit(30);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "SIGINT to forkcheck's exit: %.2f s\n", took);
  ASSERT_NE(status, -1) << "forkcheck did not end after SIGINT: it waited for the zygote";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  expect_nothing_left(pid);
  fs::remove_all(dir);
}

// A run killed mid-way leaves its own run log, readable, and no report of an earlier run beside
// it that a reader could take for this one's.
TEST(NothingLost, SigkillMidRunLeavesNoStaleReportAndAReadableRunLog) {
  auto out = fresh_dir("sigkill");
  {
    Forkcheck first({"run", "gomp-fork-hang", "--only", "spawn", "--out", out.string()});
    int status = first.wait_exit(120);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << first.seen;
  }
  ASSERT_TRUE(fs::exists(out / "report.json"));

  Forkcheck fc({"all", "--jobs", "1", "--out", out.string()});
  ASSERT_TRUE(fc.wait_progress_lines(1, 120)) << fc.seen;
  pid_t pid = fc.pid;
  ::kill(pid, SIGKILL);
  ASSERT_NE(fc.wait_exit(10), -1);

  for (const char* f : {"report.json", "report.html", "junit.xml", "summary.md"})
    EXPECT_FALSE(fs::exists(out / f)) << f << " of the earlier run is still there";
  // The run log holds the run header, the planned cases and the finished variant.
  std::ifstream log(out / "run.jsonl");
  std::string line;
  size_t variants = 0, lines = 0;
  while (std::getline(log, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "line " << lines << " is torn: " << line;
    ++lines;
    if (j.value("type", "") == "variant") ++variants;
  }
  EXPECT_GE(variants, 1u);
  // Without forkcheck, its guardian kills what the run had started.
  expect_nothing_left(pid);
  fs::remove_all(out);
}

// `forkcheck run ... | head -1`: the reader goes away after one line. forkcheck ignores SIGPIPE:
// the console stops, the run does not, the reports are written and the exit status is the run's.
TEST(ClosedStdout, RunPipedIntoHeadLeavesACompleteReport) {
  auto out = fresh_dir("head");
  Forkcheck fc({"run", "gomp-fork-hang", "static-init-fork", "--out", out.string()});
  ASSERT_TRUE(fc.wait_progress_lines(1, 120)) << fc.seen;
  ::close(fc.out);  // as head -1 does after its line
  fc.out = -1;
  const pid_t pid = fc.pid;
  const int status = fc.wait_exit(120);
  ASSERT_NE(status, -1) << "forkcheck did not end";
  ASSERT_TRUE(WIFEXITED(status)) << "forkcheck died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "every variant behaved: the run's own exit status";
  auto report = read_json(out / "report.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["run"].contains("finished_at"));
  size_t variants = 0, interrupted = 0;
  for (const auto& c : report["cases"])
    for (const auto& v : c["variants"]) {
      ++variants;
      interrupted += v.value("interrupted", false) ? 1 : 0;
    }
  EXPECT_EQ(report["cases"].size(), 2u);
  EXPECT_GE(variants, 9u) << "every variant of both cases";
  EXPECT_EQ(interrupted, 0u);
  EXPECT_EQ(report["summary"]["ok"], true);
  for (const char* f : {"report.html", "junit.xml", "summary.md"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  expect_nothing_left(pid);
  fs::remove_all(out);
}

// Whatever forkcheck started (variants, the zygotes, the guardian) ends before forkcheck does, and
// is reaped by it. The test makes itself a child subreaper first: anything forkcheck left, alive
// or a zombie, would be re-parented to the test and show among its children.
TEST(Helpers, NothingForkcheckStartedOutlivesIt) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  auto out = fresh_dir("helpers");
  pid_t pid = -1;
  {
    Forkcheck fc({"run", "graceful-shutdown", "gomp-fork-hang", "--out", out.string()});
    pid = fc.pid;
    const int status = fc.wait_exit(120);
    ASSERT_TRUE(WIFEXITED(status)) << status;
  }
  std::vector<std::string> left;
  for (const auto& t : fs::directory_iterator("/proc/self/task")) {
    std::ifstream in(t.path() / "children");
    int child;
    while (in >> child) {
      std::ifstream cmd("/proc/" + std::to_string(child) + "/cmdline");
      std::string c((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
      for (auto& ch : c) ch = ch == '\0' ? ' ' : ch;
      left.push_back(std::to_string(child) + " (" + c + ")");
    }
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  for (const auto& l : left) ADD_FAILURE() << "left by forkcheck " << pid << ": " << l;
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  fs::remove_all(out);
}

}  // namespace
