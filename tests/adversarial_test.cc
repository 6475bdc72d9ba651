// The supervisor against hostile children (tests/adversarial/*.c, one behaviour each): busy at
// the deadline, a parent waiting for a busy child, an exit in the grace period or while the
// stacks are taken, a setpgid escaper, a zombie leader with an environment-less daemon, nonsense
// on the channel, a probe of the descriptors and signals a child starts with, a tree whose stacks
// take too long, and, through the forkcheck executable, a closed stdout, a killed guardian and a
// pid reused by a decoy in a PID namespace. Each test asserts the outcome, that nothing of the
// tree is left, and that a bystander (a process of ours outside every tree, in our own process
// group) lived: nothing outside a tree received a signal.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/platform/process_info.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/watchdog_record.h"
#include "launch/process_tree.h"
#include "own_cpu.h"
#include "slow_debugger.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string hostile(const char* name) { return std::string(FC_ADVERSARIAL_DIR) + "/" + name; }

bool alive(pid_t pid) {
  auto f = launch::process_facts(pid);
  return f && !f->zombie();
}

// Waits briefly for `pid` to be gone (a killed process is reaped by its new parent in a moment).
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 200 && alive(pid); ++i) std::this_thread::sleep_for(5ms);
  return !alive(pid);
}

// A process of ours outside every tree, in our own process group: it must outlive each test.
class Bystander {
 public:
  Bystander() {
    pid_ = ::fork();
    if (pid_ == 0) {
      for (;;) ::pause();
    }
  }
  ~Bystander() {
    EXPECT_TRUE(alive(pid_)) << "the bystander (pid " << pid_ << ") received a signal";
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Bystander(const Bystander&) = delete;
  Bystander& operator=(const Bystander&) = delete;

 private:
  pid_t pid_ = -1;
};

// Nothing any job of this test process started is alive (each carries the run token).
void expect_nothing_left() {
  std::vector<ProcessId> left;
  for (int i = 0; i < 100; ++i) {
    left = processes_with_env(kRunTokenVar, run_token());
    if (left.empty()) return;
    std::this_thread::sleep_for(10ms);
  }
  for (ProcessId p : left) ADD_FAILURE() << "pid " << p << " of a supervised tree is still alive";
}

LaunchSpec spec(std::vector<std::string> argv, double timeout_s, bool stacks = false) {
  LaunchSpec s;
  s.argv = std::move(argv);
  s.timeout_s = timeout_s;
  s.grace_s = 0.5;
  s.collect_stacks = stacks;
  return s;
}

TEST(Adversarial, BusyAtTheDeadlineIsATimeoutNotAHang) {
  Bystander bystander;
  auto r = supervise(spec({hostile("busy")}, 1.5));
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
  EXPECT_FALSE(r.tree.blocked);
  EXPECT_GT(r.tree.cpu_s_in_window, 0.01 * r.tree.window_s) << "it computed in the window";
  // Why it is no hang: it was working, or (on a machine busier than it) runnable and starved.
  EXPECT_TRUE(c.message.find("still working") != std::string::npos ||
              c.message.find("starved") != std::string::npos)
      << c.message;
  EXPECT_TRUE(r.sent_sigterm);
  EXPECT_EQ(r.exit.signal, SIGTERM);
  expect_nothing_left();
}

TEST(Adversarial, AParentWaitingForABusyChildIsATimeout) {
  Bystander bystander;
  auto r = supervise(spec({hostile("busy"), "parent"}, 1.5));
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
  EXPECT_EQ(r.tree.processes, 2u) << "the parent and its busy child";
  expect_nothing_left();
}

TEST(Adversarial, ABlockedTreeIsAHangAndSaysWhatItsThreadsWaitIn) {
  Bystander bystander;
  auto r = supervise(spec({hostile("blocked_tree"), "3"}, 1.5));
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang) << c.message;
  EXPECT_TRUE(r.tree.blocked);
  EXPECT_EQ(r.tree.processes, 3u);
  EXPECT_EQ(r.tree.waiting_in, "pause (3)");
  EXPECT_LT(r.tree.cpu_s_in_window, 0.01 * r.tree.window_s);
  expect_nothing_left();
}

TEST(Adversarial, AnExitInTheGracePeriodIsRecordedAndTheOutcomeIsTheTrees) {
  Bystander bystander;
  auto s = spec({hostile("exits_in_grace")}, 1.5);
  s.grace_s = 3;  // it takes 0.2 s: room enough on a loaded machine
  auto r = supervise(s);
  const auto c = classify(r, false);
  // Ended because it was signalled: a hang (it was blocked), with its own exit recorded.
  EXPECT_EQ(c.outcome, Outcome::kHang) << c.message;
  EXPECT_TRUE(r.sent_sigterm);
  EXPECT_FALSE(r.sent_sigkill) << "it ended within the grace period";
  EXPECT_EQ(r.exit.code, 7);
  EXPECT_EQ(r.exit.signal, 0);
  EXPECT_FALSE(exited_by_itself(r));
  expect_nothing_left();
}

TEST(Adversarial, AnExitWhileTheStacksAreTakenIsItsOwnOutcome) {
  // A step overdue (0.3 s) and its tree blocked: time is called at about 1.3 s, its stacks take
  // 3 s; it exits by itself at 2.5 s, before forkcheck signalled it: its outcome is its own exit
  // (ok), not a hang.
  Bystander bystander;
  ChildResult r;
  {
    SlowDebugger debugger(3, "slow eu-stack: gave up");
    auto s = spec({FC_FAULT_CHILD, "step-hang-exit", "2.5"}, 30, /*stacks=*/true);
    r = supervise(s);
  }
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kOk) << c.message;
  EXPECT_TRUE(r.step_hang.has_value());
  EXPECT_TRUE(exited_by_itself(r));
  EXPECT_FALSE(r.sent_sigterm);
  EXPECT_NE(c.message.find("before forkcheck signalled it"), std::string::npos) << c.message;
  expect_nothing_left();
}

TEST(Adversarial, ASetpgidEscaperIsPartOfTheTreeAndEndsWithIt) {
  Bystander bystander;
  auto r = supervise(spec({hostile("setpgid_escaper"), "stay"}, 1.5));
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang) << c.message;
  EXPECT_EQ(r.tree.processes, 2u) << "the escaper was found outside the child's group";
  const pid_t escaper = std::atoi(r.out.text().c_str());
  ASSERT_GT(escaper, 0) << r.out.text();
  EXPECT_TRUE(gone_soon(escaper));
  expect_nothing_left();
}

TEST(Adversarial, ASetpgidEscaperLeftBehindIsKilled) {
  Bystander bystander;
  auto r = supervise(spec({hostile("setpgid_escaper"), "leave"}, 30));
  EXPECT_EQ(classify(r, false).outcome, Outcome::kOk);
  const pid_t escaper = std::atoi(r.out.text().c_str());
  ASSERT_GT(escaper, 0) << r.out.text();
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0], escaper);
  EXPECT_TRUE(gone_soon(escaper));
  expect_nothing_left();
}

// The daemon has no run token (an empty environment), left the group and the session, and its
// parent is a zombie leader: it is found because it was seen in the tree, or re-parented to us.
TEST(Adversarial, AZombieLeadersTokenlessDaemonIsKilled) {
  for (const char* mode : {"block", "exit"}) {
    SCOPED_TRACE(mode);
    Bystander bystander;
    auto r = supervise(spec({hostile("zombie_leader"), mode}, 1.5));
    const pid_t daemon = std::atoi(r.out.text().c_str());
    ASSERT_GT(daemon, 0) << r.out.text();
    EXPECT_FALSE(started_with_env(daemon, kRunTokenVar, run_token())) << "it must have no token";
    const auto c = classify(r, false);
    EXPECT_EQ(c.outcome, std::string(mode) == "block" ? Outcome::kHang : Outcome::kOk) << c.message;
    EXPECT_TRUE(gone_soon(daemon)) << "the daemon (pid " << daemon << ") survived";
    expect_nothing_left();
  }
}

// Nonsense on the channel makes that variant a protocol-error naming what it sent; the run goes
// on: the variant after it ends as it should.
class BadChannel : public ::testing::TestWithParam<const char*> {};

TEST_P(BadChannel, IsAProtocolErrorAndTheRunGoesOn) {
  Bystander bystander;
  std::vector<LaunchSpec> specs = {spec({hostile("bad_channel"), GetParam()}, 30),
                                   spec({FC_FAULT_CHILD, "result", "ok"}, 30)};
  std::vector<ChildResult> results(2);
  Supervisor().run(specs, 2, [&](size_t i, ChildResult&& r) { results[i] = std::move(r); });
  const auto bad = classify(results[0], true);
  EXPECT_EQ(bad.outcome, Outcome::kProtocolError) << bad.message;
  EXPECT_FALSE(results[0].bad_channel_why.empty());
  EXPECT_LE(results[0].bad_channel_line.size(), 1100u);
  if (std::string(GetParam()) != "huge") {
    EXPECT_NE(bad.message.find(results[0].bad_channel_line), std::string::npos) << bad.message;
  }
  EXPECT_EQ(classify(results[1], true).outcome, Outcome::kOk);
  expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(Adversarial, BadChannel,
                         ::testing::Values(R"({"ev":"result","outcome":3})", "not json at all",
                                           R"([1,2,3])", R"({"ev":"bogus"})",
                                           R"({"ev":"step","pid":"x","step":"s"})",
                                           R"({"ev":"step","pid":1,"step":"s","within_s":-1})",
                                           R"({"ev":"details","details":[1]})",
                                           R"({"ev":"result","details":"x"})",
                                           R"({"ev":"step","pid":1,"step":"s","within_s":1e12})",
                                           "\x1b[31m{\"ev\":", "huge", "deep", "newlines"));

TEST(Adversarial, TheStacksOfATreeAreTakenSideBySideWithinTheirBudget) {
  // Four blocked processes, a debugger that takes 1.5 s per process: one after another that
  // would be 6 s; side by side (as many at once as there are CPUs, at least two), 3 s or less.
  // Time is called by a stall that lasted 1 s (--hang-after), long before the deadline: the
  // stacks get the spec's budget (after a deadline they get what is left of its promise).
  Bystander bystander;
  ChildResult r;
  SlowDebugger debugger(1.5, "slow eu-stack: done");
  auto s = spec({hostile("blocked_tree"), "4"}, 60, /*stacks=*/true);
  s.hang_after_s = 1;
  s.stacks_budget_s = 30;  // room for a busy machine: side by side is what most_at_once shows
  r = supervise(s);
  const int at_once =
      static_cast<int>(std::min(4u, std::max(2u, std::thread::hardware_concurrency())));
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  // Called by --hang-after, either for the still tree or for one of its paused processes (proven
  // stuck before the tree's window was full when the forks came slowly): both are true of it.
  EXPECT_TRUE(r.called_for == TimeCalled::kStall || r.called_for == TimeCalled::kStuck)
      << watchdog_record(r).dump(1);
  EXPECT_NE(r.called_for, TimeCalled::kDeadline);
  EXPECT_EQ(debugger.runs(), 4);
  EXPECT_EQ(debugger.most_at_once(), at_once) << "side by side, not one after another";
  EXPECT_EQ(r.stacks.note.find("budget"), std::string::npos)
      << "all in within it: " << r.stacks.note;
  expect_nothing_left();
}

TEST(Adversarial, TheDeadlineBoundsTheVariantStacksIncluded) {
  // A debugger that would take 30 s: what is left of the deadline's promise for stacks (0.8 s)
  // ends it, and the variant ends without waiting for it, with what /proc says and why.
  Bystander bystander;
  SlowDebugger debugger(30, "never seen");
  auto s = spec({hostile("blocked_tree"), "2"}, 1.0, /*stacks=*/true);
  s.stacks_budget_s = 1.0;
  auto r = supervise(s);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  EXPECT_TRUE(debugger.times("end").empty()) << "the variant waited for its 30 s debugger";
  EXPECT_NE(r.stacks.note.find("budget"), std::string::npos) << r.stacks.note;
  EXPECT_EQ(r.stacks.threads.size(), 2u) << "each process's threads, from /proc";
  expect_nothing_left();
}

// A chain in the child's group, each process forking the next and exiting within 0.5 ms: always
// a generation ahead of a look. The child exits at once; while it is held unreaped its group can
// be killed as a whole, which no fork of the chain escapes.
TEST(Adversarial, AForkChainInTheChildsGroupDiesWithIt) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    Bystander bystander;
    auto r = supervise(spec({hostile("fork_chain"), "500"}, 30));
    EXPECT_EQ(classify(r, false).outcome, Outcome::kOk);
    std::this_thread::sleep_for(300ms);  // a chain that escaped would have forked on by now
    expect_nothing_left();
  }
}

// /proc shows a process whose main thread ended (pthread_exit) as a zombie while its other threads
// run: it is alive, working, and part of its tree.
TEST(Adversarial, AProcessWhoseMainThreadEndedStillWorks) {
  Bystander bystander;
  auto r = supervise(spec({hostile("zombie_main"), "busy"}, 1.5));
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
  EXPECT_EQ(r.tree.processes, 1u);
  EXPECT_GE(r.tree.threads, 1u);
  expect_nothing_left();
}

TEST(Adversarial, AProcessWhoseMainThreadEndedIsNotLeftBehind) {
  Bystander bystander;
  auto r = supervise(spec({hostile("zombie_main"), "escape"}, 30));
  const pid_t d = std::atoi(r.out.text().c_str());
  ASSERT_GT(d, 0) << r.out.text();
  EXPECT_EQ(classify(r, false).outcome, Outcome::kOk);
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0], d);
  EXPECT_TRUE(gone_soon(d));
  expect_nothing_left();
}

// Hundreds of short-lived processes, seen by the looks: a supervisor that held a descriptor for
// every process it ever saw would run out (here under a limit of 200) and lose its tree.
TEST(Adversarial, ThousandsOfShortLivedProcessesCostNoDescriptors) {
  Bystander bystander;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 200;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  // Its 600 children take some 6 s; a busy machine may take longer, and the deadline must find
  // them all gone ("computing" said): the deadline doubles until it does.
  ChildResult r;
  for (double deadline = 10; deadline <= 40; deadline *= 2) {
    r = supervise(spec({hostile("many_children"), "600"}, deadline));
    if (r.out.text().find("computing") != std::string::npos) break;
  }
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_NE(r.out.text().find("computing"), std::string::npos) << "its children never all ended";
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
  EXPECT_EQ(r.tree.processes, 1u) << "only the parent, computing, at the end";
  EXPECT_EQ(r.tree.threads, 1u);
  expect_nothing_left();
}

// With two trees running, an orphan that left without a token between two looks cannot be told
// to one of them: it is killed when the run ends, and nothing outlives the run.
TEST(Adversarial, AnUnclaimedOrphanOfOneOfTwoTreesIsKilledWhenTheRunEnds) {
  Bystander bystander;
  std::vector<LaunchSpec> specs = {spec({hostile("zombie_leader"), "exit"}, 30),
                                   spec({FC_FAULT_CHILD, "sleep", "2"}, 30)};
  std::vector<ChildResult> results(2);
  Supervisor().run(specs, 2, [&](size_t i, ChildResult&& r) { results[i] = std::move(r); });
  const pid_t daemon = std::atoi(results[0].out.text().c_str());
  ASSERT_GT(daemon, 0) << results[0].out.text();
  EXPECT_TRUE(gone_soon(daemon)) << "the daemon (pid " << daemon << ") outlived the run";
  expect_nothing_left();
}

// A tree of many processes: its debuggers run a few at a time, within one budget, and the note
// names a few reasons, not hundreds.
TEST(Adversarial, AManyProcessTreesDebuggersRunAFewAtATime) {
  Bystander bystander;
  SlowDebugger debugger(0.3, "slow eu-stack: done");
  auto s = spec({hostile("blocked_tree"), "12"}, 60, /*stacks=*/true);
  s.hang_after_s = 1;  // a stall's call: the spec's budget (see the test above)
  s.stacks_budget_s = 10;
  auto r = supervise(s);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  EXPECT_EQ(debugger.runs(), 12);
  EXPECT_LE(debugger.most_at_once(),
            static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
  EXPECT_LT(r.stacks.note.size(), 1200u) << r.stacks.note;
  expect_nothing_left();
}

// A step long overdue while its tree works: the supervisor looks at the tree four times a second,
// it does not spin on the passed due time (it did, every millisecond: 74 ms of CPU for 3 s, where
// 5 ms were its due). Measured beside the same 3 s of work without a step, in this run: what the
// machine costs (its process count, a sanitizer) counts in both.
TEST(Adversarial, AnOverdueStepOfAWorkingTreeDoesNotMakeTheSupervisorSpin) {
  Bystander bystander;
  long wake0 = fc::own_thread_wakeups();
  double cpu0 = own_cpu_s();
  auto plain = supervise(spec({FC_FAULT_CHILD, "busy", "3"}, 30));
  const double baseline = own_cpu_s() - cpu0;
  const long baseline_wakeups = fc::own_thread_wakeups() - wake0;
  wake0 = fc::own_thread_wakeups();
  cpu0 = own_cpu_s();
  auto r = supervise(spec({FC_FAULT_CHILD, "step-busy", "3"}, 30));
  const double cpu = own_cpu_s() - cpu0;
  const long wakeups = fc::own_thread_wakeups() - wake0;
  EXPECT_EQ(plain.exit.code, 0);
  EXPECT_EQ(r.exit.code, 0);
  EXPECT_FALSE(r.step_hang.has_value());
  // The wake count does not move with the machine's load; the spin woke it ~3,000 times.
  if (wake0 >= 0) {
    EXPECT_LT(wakeups - baseline_wakeups, 100)
        << wakeups << " wakeups beside a baseline of " << baseline_wakeups;
  }
  EXPECT_LT(cpu - baseline, 0.05) << "the supervisor used " << cpu << " s of CPU beside a "
                                  << baseline << " s baseline";
  std::printf(
      "[ figure   ] supervisor beside a 3 s overdue busy step: %.1f ms of CPU, %ld wakeups "
      "(without a step: %.1f ms, %ld wakeups)\n",
      cpu * 1e3, wakeups, baseline * 1e3, baseline_wakeups);
}

// 8 MiB of empty lines on the channel: each is a bad line, counted in linear time.
TEST(Adversarial, AFloodOfChannelLinesCostsLinearTime) {
  Bystander bystander;
  const double cpu0 = own_cpu_s();
  auto r = supervise(spec({hostile("bad_channel"), "newlines"}, 60));
  const double cpu = own_cpu_s() - cpu0;
  EXPECT_EQ(classify(r, true).outcome, Outcome::kProtocolError);
  EXPECT_EQ(r.bad_channel_lines, (8u << 20) + 2)
      << "every empty line, the newline after them and the valid result";
  EXPECT_LT(cpu, 1.0) << "quadratic: 6.8 s";
  std::printf("[ figure   ] supervisor CPU for 8 MiB of channel lines: %.0f ms\n", cpu * 1e3);
}

// ---- through the forkcheck executable --------------------------------------------------------

struct Ran {
  int status = -1;
  std::string out, err;
};

// Runs forkcheck with `args`; its stdout is a pipe that is closed at once when `close_stdout`.
// `during(pid)` runs while it does.
template <typename F>
Ran forkcheck(const std::vector<std::string>& args, bool close_stdout, F during) {
  int out[2], err[2];
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_EQ(::pipe(err), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    std::vector<std::string> copy = args;
    std::vector<char*> argv = {const_cast<char*>(FC_FORKCHECK)};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(FC_FORKCHECK, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (close_stdout) ::close(out[0]);
  during(pid);
  Ran r;
  auto drain = [](int fd, std::string& into) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) into.append(buf, static_cast<size_t>(n));
  };
  if (!close_stdout) drain(out[0], r.out);
  drain(err[0], r.err);
  ::waitpid(pid, &r.status, 0);
  if (!close_stdout) ::close(out[0]);
  ::close(err[0]);
  return r;
}

nlohmann::json read_report(const fs::path& dir) {
  std::ifstream in(dir / "report.json");
  return nlohmann::json::parse(in, nullptr, false);
}

// The one variant of a `forkcheck exec` run written to `dir`; null (and a failure) without one.
nlohmann::json exec_variant(const fs::path& dir) {
  const auto report = read_report(dir);
  if (report.is_discarded() || !report.contains("cases")) {
    ADD_FAILURE() << "no report.json in " << dir;
    return nullptr;
  }
  return report["cases"][0]["variants"][0];
}

fs::path fresh_dir(const std::string& name) {
  fs::path d =
      fs::path(testing::TempDir()) / ("adversarial-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

TEST(Adversarial, AClosedStdoutStopsTheConsoleNotTheRun) {
  Bystander bystander;
  const fs::path out = fresh_dir("closed-stdout");
  // A command that floods its output, so forkcheck writes a long line to the closed pipe.
  Ran r = forkcheck({"exec", "--out", out.string(), "--", FC_FAULT_CHILD, "exit-message", "3",
                     "a failure message"},
                    /*close_stdout=*/true, [](pid_t) {});
  ASSERT_TRUE(WIFEXITED(r.status))
      << "forkcheck died of signal " << WTERMSIG(r.status) << ": " << r.err;
  EXPECT_EQ(WEXITSTATUS(r.status), 1) << "the command failed: exit status 1, as with stdout open";
  const auto report = read_report(out);
  ASSERT_FALSE(report.is_discarded()) << "no report.json";
  EXPECT_TRUE(report["run"].contains("finished_at")) << "the run log has its end line";
  EXPECT_NE(report["run"].value("complete", true), false);
  EXPECT_EQ(report["cases"][0]["variants"][0]["outcome"], "error");
  for (const char* f : {"report.html", "junit.xml", "summary.md"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  fs::remove_all(out);
}

// The guardian: forkcheck's child in a session of its own.
pid_t guardian_of(pid_t forkcheck_pid) {
  for (int i = 0; i < 200; ++i) {
    for (ProcessId c : launch::child_processes(forkcheck_pid)) {
      auto f = launch::process_facts(c);
      if (f && f->sid == c && !f->zombie()) return c;
    }
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

TEST(Adversarial, AKilledGuardianDoesNotKillForkcheck) {
  Bystander bystander;
  const fs::path out = fresh_dir("guardian");
  pid_t guardian = 0;
  Ran r = forkcheck({"exec", "--out", out.string(), "--", FC_FAULT_CHILD, "sleep", "1.5"},
                    /*close_stdout=*/false, [&](pid_t pid) {
                      guardian = guardian_of(pid);
                      if (guardian > 0) ::kill(guardian, SIGKILL);
                    });
  ASSERT_GT(guardian, 0) << "no guardian found";
  ASSERT_TRUE(WIFEXITED(r.status)) << "forkcheck died of signal " << WTERMSIG(r.status);
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.out << r.err;
  EXPECT_NE(r.err.find("the guardian process is gone"), std::string::npos) << r.err;
  EXPECT_EQ(exec_variant(out)["outcome"], "ok");
  fs::remove_all(out);
}

// An escaper that joins forkcheck's own process group and drops the run token: forkcheck starts no
// child but through the supervisor, so every child of its process is a tree's, and ends with it.
TEST(Adversarial, AnEscaperIntoForkchecksOwnGroupIsEnded) {
  Bystander bystander;
  const fs::path out = fresh_dir("joiner");
  Ran r = forkcheck({"exec", "--out", out.string(), "--", hostile("group_joiner")}, false,
                    [](pid_t) {});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.out << r.err;
  const auto v = exec_variant(out);
  ASSERT_TRUE(v.is_object());
  const pid_t d = std::atoi(v.value("stdout", std::string()).c_str());
  ASSERT_GT(d, 0) << v.value("stdout", std::string());
  EXPECT_TRUE(gone_soon(d)) << "pid " << d << " joined forkcheck's group and outlived it";
  EXPECT_EQ(v["watchdog"]["leftovers_killed"], nlohmann::json::array({d}));
  fs::remove_all(out);
}

// A process of the session, not of the tree, joins the child's process group (any process of the
// session may): the group is not killed as a whole, the stranger lives and the report names it.
TEST(Adversarial, AStrangerThatJoinedTheChildsGroupIsSpared) {
  Bystander bystander;
  const fs::path out = fresh_dir("stranger");
  pid_t stranger = 0;
  Ran r = forkcheck({"exec", "--timeout", "2", "--out", out.string(), "--", FC_FAULT_CHILD, "hang"},
                    false, [&](pid_t pid) {
                      pid_t root = 0;
                      for (int i = 0; i < 300 && root == 0; ++i) {
                        // The command (forkcheck runs its environment probe first).
                        for (ProcessId c : launch::child_processes(pid)) {
                          std::error_code ec;
                          if (fs::read_symlink("/proc/" + std::to_string(c) + "/exe", ec) ==
                              fs::path(FC_FAULT_CHILD))
                            root = c;
                        }
                        if (root == 0) std::this_thread::sleep_for(10ms);
                      }
                      if (root == 0) return;
                      stranger = ::fork();
                      if (stranger == 0) {
                        ::setpgid(0, root);
                        for (;;) ::pause();
                      }
                    });
  ASSERT_GT(stranger, 0) << "the child was not found";
  const bool lived = alive(stranger);
  ::kill(stranger, SIGKILL);
  ::waitpid(stranger, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(r.status)) << r.err;
  EXPECT_TRUE(lived) << "the stranger (pid " << stranger << ") was killed with the child's group";
  const auto v = exec_variant(out);
  EXPECT_EQ(v["outcome"], "hang") << v["message"];
  EXPECT_EQ(v["watchdog"]["group_strangers"], nlohmann::json::array({stranger}));
  EXPECT_NE(v.value("message", std::string()).find("joined its process group"), std::string::npos)
      << v["message"];
  fs::remove_all(out);
}

// forkcheck SIGKILLed: the guardian kills what the run started, also a daemon that has no run
// token, left its group and session and whose parent is a zombie leader (the tree told the
// guardian of it when it was seen).
TEST(Adversarial, TheGuardianKillsATokenlessDaemonWhenForkcheckIsKilled) {
  Bystander bystander;
  const fs::path out = fresh_dir("guardian-daemon");
  const fs::path pid_file =
      fs::path(testing::TempDir()) / ("daemon-pid-" + std::to_string(::getpid()));
  fs::remove(pid_file);
  pid_t daemon = 0;
  Ran r = forkcheck(
      {"exec", "--out", out.string(), "--", hostile("zombie_leader"), "block", pid_file.string()},
      false, [&](pid_t pid) {
        for (int i = 0; i < 500 && daemon == 0; ++i) {
          std::ifstream in(pid_file);
          in >> daemon;
          if (daemon == 0) std::this_thread::sleep_for(10ms);
        }
        std::this_thread::sleep_for(800ms);  // the tree has looked at it, and told
        ::kill(pid, SIGKILL);
      });
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(WIFSIGNALED(r.status));
  bool gone = false;
  for (int i = 0; i < 400 && !gone; ++i) {
    gone = !alive(daemon);
    if (!gone) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(gone) << "the daemon (pid " << daemon << ") outlived a killed forkcheck";
  if (!gone) ::kill(daemon, SIGKILL);
  fs::remove(pid_file);
  fs::remove_all(out);
}

// Started with stdin, stdout and stderr closed: its own pipes and sockets must not take those
// numbers (a write to stderr would land in the guardian's socket).
TEST(Adversarial, ForkcheckStartedWithItsStandardDescriptorsClosedWorks) {
  Bystander bystander;
  const fs::path out = fresh_dir("closed-stdio");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(0);
    ::close(1);
    ::close(2);
    ::execl(FC_FORKCHECK, FC_FORKCHECK, "exec", "--out", out.c_str(), "--", FC_FAULT_CHILD,
            "exit-message", "3", "a message on stderr", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1) << "the command failed";
  EXPECT_EQ(exec_variant(out)["outcome"], "error");
  fs::remove_all(out);
}

// What a child of forkcheck starts with, whatever forkcheck itself was started with: here a
// blocked SIGUSR1, an ignored SIGUSR2, and a descriptor that is not close-on-exec.
TEST(Adversarial, AChildStartsWithOnlyStdioAnEmptyMaskAndTheInheritedDispositions) {
  Bystander bystander;
  const fs::path out = fresh_dir("start-state");
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    ::signal(SIGUSR2, SIG_IGN);
    ::signal(SIGPIPE, SIG_DFL);
    const int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec
    ::dup2(leaked, 9);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execl(FC_FORKCHECK, FC_FORKCHECK, "exec", "--out", out.c_str(), "--",
            hostile("start_state_probe").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto report = read_report(out);
  ASSERT_FALSE(report.is_discarded());
  const auto probe = nlohmann::json::parse(
      report["cases"][0]["variants"][0].value("stdout", std::string()), nullptr, false);
  ASSERT_TRUE(probe.is_object()) << report["cases"][0]["variants"][0].value("stdout",
                                                                            std::string());
  std::vector<std::string> fds;
  for (const auto& [fd, target] : probe["fds"].items())
    fds.push_back(fd + " -> " + target.get<std::string>());
  EXPECT_EQ(probe["fds"].size(), 3u)
      << "only stdin, stdout and stderr: " << ::testing::PrintToString(fds);
  EXPECT_EQ(probe["blocked"], "0000000000000000") << "the mask is empty";
  const unsigned long long ignored = std::stoull(probe["ignored"].get<std::string>(), nullptr, 16);
  EXPECT_TRUE(ignored & (1ull << (SIGUSR2 - 1))) << "SIGUSR2 was ignored when forkcheck started";
  EXPECT_FALSE(ignored & (1ull << (SIGPIPE - 1))) << "forkcheck's own SIG_IGN of SIGPIPE leaked";
  fs::remove_all(out);
}

// ---- truth under load, partial deadlocks, the deadline's promise (issue 24) ----------------

// Busy loops pinned to CPU 0 for `seconds`, ended when the test ends: a loaded machine.
class BusyLoops {
 public:
  BusyLoops(int n, double seconds) {
    for (int i = 0; i < n; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        ::sched_setaffinity(0, sizeof one, &one);
        const auto until = Clock::now() + std::chrono::duration<double>(seconds);
        volatile unsigned long x = 0;
        while (Clock::now() < until) x = x + 1;
        ::_exit(0);
      }
      pids_.push_back(pid);
    }
  }
  ~BusyLoops() {
    for (pid_t p : pids_) ::kill(p, SIGKILL);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
  }
  BusyLoops(const BusyLoops&) = delete;
  BusyLoops& operator=(const BusyLoops&) = delete;

 private:
  std::vector<pid_t> pids_;
};

// A program that needs 0.3 s of CPU, run SCHED_IDLE on CPU 0 behind two busy loops that hold it
// for 5 s: runnable, starved, never still. --hang-after 2 must not end it: it is said to be
// starved, and it ends by itself once the loops are done, or (on a machine where something else
// keeps every CPU busy, as stress -c 4 does: SCHED_IDLE then never runs) its deadline is a
// timeout said as starved. Never a hang, either way.
TEST(Adversarial, ASchedIdleProgramBehindBusyLoopsIsStarvedNeverAHang) {
  if (std::system("command -v taskset >/dev/null && command -v chrt >/dev/null") != 0)
    GTEST_SKIP() << "taskset and chrt (util-linux) are needed to pin and deprioritise it";
  Bystander bystander;
  BusyLoops loops(2, 5.0);
  std::this_thread::sleep_for(100ms);  // the loops hold CPU 0 first
  auto s = spec({"taskset", "-c", "0", "chrt", "--idle", "0", FC_FAULT_CHILD, "cpu", "0.3"}, 20);
  s.hang_after_s = 2;
  s.note_stalls = true;
  int starved = 0, stalled = 0;
  s.on_stall = [&](StallNote::Event e, const StallNote&, const Stacks*) {
    starved += e == StallNote::Event::kStarved;
    stalled += e == StallNote::Event::kStalled;
  };
  const auto r = supervise(s);
  const auto c = classify(r, false);
  EXPECT_NE(r.called_for, TimeCalled::kStall);
  EXPECT_EQ(stalled, 0) << "runnable is not still";
  EXPECT_EQ(starved, 1);
  EXPECT_GE(r.tree.longest_starved_s, 1.0);
  if (c.outcome == Outcome::kOk) {
    EXPECT_GE(r.duration_s, 4.0) << "it could not run before the loops ended";
  } else {
    EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
    EXPECT_NE(c.message.find("starved"), std::string::npos) << c.message;
  }
  std::printf(
      "[ figure   ] starved program: %.1f s wall, waited %.1f s for a CPU, longest "
      "starved stretch %.1f s\n",
      r.duration_s, r.tree.run_queue_s, r.tree.longest_starved_s);
  expect_nothing_left();
}

// A child that can never go on (one thread on a lock it holds itself: a private futex with no
// timeout) beside a parent that computes: the tree works, yet one process of it is stuck. At the
// deadline it is a hang (a partial deadlock), not a timeout; with --hang-after it ends the run
// as soon as it has lasted that long, and the result names the process.
TEST(Adversarial, AStuckProcessBesideABusyOneIsAPartialDeadlock) {
  Bystander bystander;
  {
    const auto r = supervise(spec({FC_FAULT_CHILD, "stuck-child-busy"}, 3.0));
    const auto c = classify(r, false);
    EXPECT_EQ(c.outcome, Outcome::kHang) << c.message;
    ASSERT_TRUE(r.stuck);
    EXPECT_NE(r.stuck->pid, r.pid) << "the child, not the busy parent";
    EXPECT_EQ(r.stuck->threads, 1u);
    EXPECT_FALSE(r.stuck->rest_still);
    EXPECT_NE(c.message.find("a partial deadlock"), std::string::npos) << c.message;
  }
  auto s = spec({FC_FAULT_CHILD, "stuck-child-busy"}, 60);
  s.hang_after_s = 2;
  const auto r = supervise(s);
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang) << c.message;
  EXPECT_EQ(r.called_for, TimeCalled::kStuck);
  ASSERT_TRUE(r.stuck);
  EXPECT_GE(r.stuck->stuck_s, 2.0);
  // Called for the stuck process, not at its 60 s deadline.
  EXPECT_EQ(watchdog_record(r).value("called_for", ""), "stuck") << watchdog_record(r).dump(1);
  EXPECT_NE(r.called_for, TimeCalled::kDeadline);
  EXPECT_NE(c.message.find("can never go on by itself"), std::string::npos) << c.message;
  expect_nothing_left();
}

// A parent stuck in vfork (its child blocks before exec): a debugger may not finish with it,
// and the deadline still ends the run within its promise, stacks included.
TEST(Adversarial, AVforkStuckParentEndsWithinTheDeadlinesPromise) {
  Bystander bystander;
  const auto t0 = Clock::now();
  const auto r = supervise(spec({FC_FAULT_CHILD, "vfork-stuck"}, 1.0, /*stacks=*/true));
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang) << classify(r, false).message;
  // Called at the deadline, and ended without waiting on the debugger that cannot finish (a
  // figure, not a bound: a busy machine stretches it).
  EXPECT_EQ(r.called_for, TimeCalled::kDeadline);
  EXPECT_EQ(watchdog_record(r).value("called_for", ""), "deadline");
  std::fprintf(stderr, "    vfork-stuck: 1.0 s deadline, ended after %.2f s (promise: 4.0)\n",
               took);
  EXPECT_FALSE(r.stacks.threads.empty()) << r.stacks.note;
  expect_nothing_left();
}

// A debugger that stops the process it looks at and then overruns its budget: killed, and the
// process continued, so a program that was only waiting (for a timer's signal) goes on and ends
// by itself.
TEST(Adversarial, ADebuggerThatOverrunsIsKilledAndItsProcessReleased) {
  Bystander bystander;
  SlowDebugger debugger(40, "never seen", /*stops_its_process=*/true);
  auto s = spec({FC_FAULT_CHILD, "pause-alarm", "3"}, 30, /*stacks=*/true);
  s.note_stalls = true;
  const auto r = supervise(s);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kOk) << classify(r, false).message;
  EXPECT_EQ(debugger.runs(), 1);
  // It ended by itself, long before its 40 s debugger would have.
  EXPECT_LT(r.duration_s, 40.0) << "waited for the debugger";
  EXPECT_NE(r.stall_stacks.note.find("killed, and the process released"), std::string::npos)
      << r.stall_stacks.note;
  for (const auto& t : r.stall_stacks.threads)
    EXPECT_EQ(t.wchan.find("ptrace"), std::string::npos) << "what our debugger did is not shown";
  expect_nothing_left();
}

// A debugger refused (as eu-stack is by a process another tracer holds): the stacks say why.
TEST(Adversarial, ARefusedDebuggerSaysWhy) {
  Bystander bystander;
  SlowDebugger debugger(0, "eu-stack: dwfl_thread_getframes: Operation not permitted");
  const auto r = supervise(spec({FC_FAULT_CHILD, "hang"}, 1.0, /*stacks=*/true));
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  EXPECT_NE(r.stacks.note.find("Operation not permitted"), std::string::npos) << r.stacks.note;
  EXPECT_FALSE(r.stacks.threads.empty()) << "what /proc said, in their place";
  expect_nothing_left();
}

// A chain of processes each leaving the group and session of the one before and forking the
// next, for good, while the first waits: nothing of it may outlive the run (it is frozen, then
// killed), and the work its short-lived members did counts (a timeout, not a hang). Run by
// forkcheck inside a PID namespace, so that a chain that did escape dies with the namespace and
// the test counts it first.
TEST(Adversarial, AForkChainThatLeavesItsGroupIsFrozenAndCounted) {
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no PID namespace here (unshare --pid needs root)";
  const fs::path out = fresh_dir("fork-chain-escaper");
  const std::string cmd =
      "unshare --pid --fork --mount-proc sh -c '" + std::string(FC_FORKCHECK) +
      " exec --timeout 2 --out " + out.string() + " -- " + hostile("fork_chain_escaper") +
      " 300 wait >/dev/null 2>&1; echo status=$?; "
      // Alive: not a zombie. One killed as forkcheck ended may need a moment (a busy machine's)
      // to die: a minute without dying is a survivor.
      "for i in $(seq 120); do n=0; for p in /proc/[0-9]*; do "
      "[ \"$(cat $p/comm 2>/dev/null)\" = fork_chain_esca ] && "
      "[ \"$(cut -d\" \" -f3 $p/stat 2>/dev/null)\" != Z ] && n=$((n+1)); done; "
      "[ $n = 0 ] && break; sleep 0.5; done; echo left=$n'";
  for (int run = 0; run < 3; ++run) {
    std::FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string text;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) text += buf;
    ::pclose(p);
    EXPECT_NE(text.find("status=1"), std::string::npos) << text;
    EXPECT_NE(text.find("left=0"), std::string::npos) << "run " << run << ": " << text;
    const auto report = read_report(out);
    ASSERT_FALSE(report.is_discarded());
    const auto& v = report["cases"][0]["variants"][0];
    EXPECT_EQ(v["outcome"], "timeout") << v["message"];
    // The chain's work, done between looks, counts: a timeout (above), not a hang, and CPU time,
    // however little a busy machine leaves it (0.26 s beside stress -c 4 broke a bound of 0.3).
    EXPECT_GT(v["watchdog"]["activity"]["cpu_s"].get<double>(), 0.0)
        << "the chain's work, done between looks, counts";
  }
  fs::remove_all(out);
}

// A pid reused by a decoy, in a PID namespace of its own (tests/adversarial/pid_reuse_probe.cc
// says how). Needs root (or a user namespace) for unshare; skipped with the reason otherwise.
class PidReuse : public ::testing::TestWithParam<const char*> {};

TEST_P(PidReuse, TheDecoyLives) {
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no PID namespace here (unshare --pid needs root): the decoy cannot be placed";
  const std::string program =
      std::string(GetParam()) == "orphan" ? hostile("orphan_maker") : std::string(FC_FAULT_CHILD);
  const std::string cmd = std::string("unshare --pid --fork --mount-proc ") + FC_PID_REUSE_PROBE +
                          " " + GetParam() + " " + program + " 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) text += buf;
  const int status = ::pclose(p);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "ns_last_pid is not writable: " << text;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("lived"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Adversarial, PidReuse,
                         ::testing::Values("guardian", "linger", "stale", "orphan"));

}  // namespace
}  // namespace fc::harness
