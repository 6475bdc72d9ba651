// The supervisor and the classification, tested by causing each fault with fault_child.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/platform/process_info.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/supervisor.h"
#include "own_cpu.h"
#include "slow_debugger.h"

namespace fc::harness {
namespace {

// Stacks are tested on their own (stacks_test.cc); here they would only add a debugger's time.
ChildResult run_child(std::vector<std::string> args, double timeout_s = 10, double grace_s = 0.5,
                      bool stacks = false) {
  LaunchSpec spec;
  spec.collect_stacks = stacks;
  spec.argv = {FC_FAULT_CHILD};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout_s = timeout_s;
  spec.grace_s = grace_s;
  return supervise(spec);
}

// A killed process may take a moment to be reaped by us (its new parent): wait for that, briefly.
void expect_gone_soon(int pid) {
  for (int i = 0; i < 200 && ::kill(pid, 0) == 0; ++i) {
    Reaper::instance().reap();
    ::usleep(5000);
  }
  EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " is still alive";
}

// Nothing of the child's process group may outlive supervise().
void expect_group_gone(const ChildResult& r) {
  EXPECT_TRUE(group_members(r.pid).empty());
  EXPECT_NE(::kill(r.pid, 0), 0);
}

TEST(Supervisor, ExitCodeIsNotASignal) {
  auto r = run_child({"exit", "11"});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit.code, 11);
  EXPECT_EQ(r.exit.signal, 0);
  auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kError);
  EXPECT_NE(c.message.find("exiting with status 11"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("exit status 11"), std::string::npos) << c.message;
  expect_group_gone(r);
}

TEST(Supervisor, ExitThreeIsError) {
  auto r = run_child({"exit", "3"});
  EXPECT_EQ(r.exit.code, 3);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kError);
}

TEST(Supervisor, SegfaultIsCrash) {
  auto r = run_child({"segv"});
  EXPECT_EQ(r.exit.signal, SIGSEGV);
  EXPECT_EQ(r.exit.code, -1);
  auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kCrash);
  EXPECT_NE(c.message.find("SIGSEGV"), std::string::npos) << c.message;
  expect_group_gone(r);
}

TEST(Supervisor, AbortIsCrash) {
  auto r = run_child({"abort"});
  EXPECT_EQ(r.exit.signal, SIGABRT);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kCrash);
}

TEST(Supervisor, DeadlineMakesHangAndSigtermEndsIt) {
  auto r = run_child({"hang"}, /*timeout_s=*/0.5);  // a child that would never end by itself
  EXPECT_EQ(r.called_for, TimeCalled::kDeadline);
  EXPECT_TRUE(r.sent_sigterm);
  EXPECT_FALSE(r.sent_sigkill);
  EXPECT_EQ(r.exit.signal, SIGTERM);
  auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang);
  expect_group_gone(r);
}

TEST(Supervisor, IgnoredSigtermIsFollowedBySigkill) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_child({"ignore-term"}, /*timeout_s=*/0.5, /*grace_s=*/0.5);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.sent_sigterm);
  EXPECT_TRUE(r.sent_sigkill);
  EXPECT_EQ(r.exit.signal, SIGKILL);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  EXPECT_GE(took, 0.9);  // the grace period was honoured (a busy machine only adds to it)
  expect_group_gone(r);
}

TEST(Supervisor, StoppedChildIsStillEnded) {
  auto r = run_child({"stop"}, /*timeout_s=*/0.5, /*grace_s=*/0.5);
  EXPECT_EQ(r.called_for, TimeCalled::kDeadline);
  EXPECT_TRUE(r.exit.ended);
  EXPECT_NE(r.exit.signal, 0);
  expect_group_gone(r);
}

TEST(Supervisor, StuckStepIsAHangLongBeforeTheDeadline) {
  auto r = run_child({"step-hang"}, /*timeout_s=*/30);
  ASSERT_TRUE(r.step_hang.has_value());
  EXPECT_EQ(r.step_hang->step, "the test step");
  EXPECT_NE(r.called_for, TimeCalled::kDeadline) << "called by the step, before the deadline";
  auto c = classify(r, true);
  EXPECT_EQ(c.outcome, Outcome::kHang);
  EXPECT_NE(c.message.find("the test step"), std::string::npos);
  expect_group_gone(r);
}

TEST(Supervisor, BusyStepPastItsAllowanceIsNotAHang) {
  // 1.5 s of computing inside a step allowed 0.3 s: overdue, but making progress.
  auto r = run_child({"step-busy", "1.5"}, /*timeout_s=*/30);
  EXPECT_FALSE(r.step_hang.has_value());
  EXPECT_EQ(r.exit.code, 0);
  EXPECT_EQ(r.steps.size(), 2u);
}

// Slow but fine: sleeping in a futex wait past what a step would allow is not a hang without a
// step; only the deadline makes one.
TEST(Supervisor, SlowButFineIsOk) {
  LaunchSpec spec;
  spec.argv = {FC_FAULT_CHILD, "sleep", "2.5"};
  spec.timeout_s = 30;
  spec.channel = false;
  auto r = supervise(spec);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kOk);
  EXPECT_NE(r.called_for, TimeCalled::kDeadline);
}

TEST(Supervisor, ResultOnTheChannelIsBelieved) {
  auto r = run_child({"result", "error"});
  ASSERT_TRUE(r.result.has_value());
  auto c = classify(r, true);
  EXPECT_EQ(c.outcome, Outcome::kError);
  EXPECT_EQ(c.message, "from fault_child");
  EXPECT_EQ(c.details["n"], 1);
}

TEST(Supervisor, MissingResultIsAHarnessError) {
  auto r = run_child({"sleep", "0"});
  auto c = classify(r, true);
  EXPECT_EQ(c.outcome, Outcome::kError);
  EXPECT_TRUE(c.harness_error);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kOk);  // a plain command that exits 0 is ok
}

TEST(Supervisor, FloodIsCappedHeadAndTail) {
  LaunchSpec spec;
  spec.argv = {FC_FAULT_CHILD, "flood", "64"};
  spec.capture_cap = 4096;
  auto r = supervise(spec);
  EXPECT_EQ(r.exit.code, 0);
  EXPECT_EQ(r.out.total_bytes(), 64u << 20);
  EXPECT_EQ(r.err.total_bytes(), 64u << 20);
  EXPECT_TRUE(r.out.truncated());
  EXPECT_LT(r.out.text().size(), 3 * 4096u);
}

// The grandchild keeps stdout and stderr open after its parent exited: the run must not wait for
// it, and it must not survive.
TEST(Supervisor, GrandchildHoldingThePipesDoesNotStallAndIsKilled) {
  auto r = run_child({"grandchild"}, /*timeout_s=*/30);
  EXPECT_EQ(r.exit.code, 0);
  EXPECT_NE(r.called_for, TimeCalled::kDeadline) << "the run waited for the grandchild's pipes";
  int grandchild = std::stoi(r.out.text());
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0], grandchild);
  expect_gone_soon(grandchild);
}

// setsid() takes the grandchild out of the process group the watchdog signals; it is found by the
// run token in its environment, killed, and (as we are a subreaper) reaped by us.
TEST(Supervisor, GrandchildThatLeftTheGroupIsStillKilled) {
  auto r = run_child({"orphan"}, /*timeout_s=*/30);
  EXPECT_EQ(r.exit.code, 0);
  int grandchild = std::stoi(r.out.text());
  EXPECT_NE(::getpgid(grandchild), r.pid);
  ASSERT_EQ(r.leftovers_killed.size(), 1u);
  EXPECT_EQ(r.leftovers_killed[0], grandchild);
  expect_gone_soon(grandchild);
}

// The peak resident size of this process since `reset_peak_rss` (Linux: VmHWM, reset through
// clear_refs, so that what earlier tests of the same process allocated, or an ASan quarantine
// kept, does not count); elsewhere, or where it cannot be reset, the peak of its whole life.
bool reset_peak_rss() {
#ifdef __linux__
  std::ofstream clear("/proc/self/clear_refs");
  return static_cast<bool>(clear << "5");
#else
  return false;
#endif
}

long peak_rss_kib(bool was_reset) {
#ifdef __linux__
  if (was_reset) {
    std::ifstream status("/proc/self/status");
    for (std::string key; status >> key;) {
      if (key == "VmHWM:") {
        long kib = 0;
        status >> kib;
        return kib;
      }
      std::getline(status, key);
    }
  }
#endif
  (void)was_reset;
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
#ifdef __APPLE__
  return ru.ru_maxrss / 1024;  // macOS reports bytes
#else
  return ru.ru_maxrss;  // Linux reports KiB
#endif
}

// Whether AddressSanitizer's runtime is in this process (its entry point, weakly bound).
extern "C" void __asan_init() __attribute__((weak));  // NOLINT(bugprone-reserved-identifier)
bool asan_linked() { return &__asan_init != nullptr; }

TEST(Supervisor, FloodOfHundredsOfMiBKeepsTheHarnessSmall) {
  const bool reset = reset_peak_rss();
  auto r = run_child({"flood", "300"}, /*timeout_s=*/120);
  EXPECT_EQ(r.exit.code, 0);
  EXPECT_EQ(r.out.total_bytes(), 300ull << 20);
  EXPECT_EQ(r.err.total_bytes(), 300ull << 20);
  EXPECT_LT(r.out.text().size() + r.err.text().size(), 512u * 1024);
  // ASan's quarantine keeps up to 256 MiB of freed buffers resident by design (230 MiB measured
  // in CI's sanitize run): the bound is the plain build's, checked there. Asked at run time:
  // the sanitize build links ASan into this test without compiling it with -fsanitize.
  if (!asan_linked()) {
    EXPECT_LT(peak_rss_kib(reset), 200L * 1024) << "peak RSS in KiB, since the flood began";
  }
}

TEST(Supervisor, CommandThatDoesNotExistIsNotStarted) {
  LaunchSpec spec;
  spec.argv = {"/nonexistent/forkcheck-no-such-program"};
  auto r = supervise(spec);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("no-such-program"), std::string::npos);
  EXPECT_TRUE(classify(r, false).harness_error);
}

TEST(Supervisor, RunsJobsConcurrently) {
  // Four children that each wait until all four have started (a barrier in a file): run one
  // after another, the first would wait alone and give up (exit 1) after 60 s.
  const std::string log = testing::TempDir() + "/barrier-" + std::to_string(::getpid());
  std::remove(log.c_str());
  std::vector<LaunchSpec> specs(4);
  for (auto& s : specs) {
    s.argv = {"/bin/sh", "-c",
              "echo started >> '" + log + "'; i=0; while [ \"$(wc -l < '" + log +
                  "')\" -lt 4 ]; do i=$((i + 1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done"};
    s.timeout_s = 120;
  }
  int done = 0;
  Supervisor().run(specs, 4, [&](size_t, ChildResult&& r) {
    EXPECT_EQ(r.exit.code, 0) << "a child waited alone: the four did not run side by side";
    ++done;
  });
  EXPECT_EQ(done, 4);
  std::remove(log.c_str());
}

// `n` children that announce a step and hang in it, their stacks taken (by whatever debugger
// FORKCHECK_STACKS names) within `budget_s`.
std::vector<LaunchSpec> step_hangs(size_t n, double budget_s = 10) {
  LaunchSpec s;
  s.argv = {FC_FAULT_CHILD, "step-hang"};
  s.timeout_s = 30;
  s.grace_s = 0.5;
  s.collect_stacks = true;
  s.stacks_budget_s = budget_s;
  return std::vector<LaunchSpec>(n, s);
}

TEST(Supervisor, StacksBeingTakenDoNotDelayAnotherChildsWatchdog) {
  // A debugger that takes 8 s (and then fails): with the stacks taken synchronously the second
  // hang would be seen 8 s late.
  std::vector<ChildResult> results(2);
  {
    SlowDebugger debugger(8, "slow eu-stack: gave up");
    Supervisor().run(step_hangs(2), 2,
                     [&](size_t i, ChildResult&& r) { results[i] = std::move(r); });
  }
  for (const auto& r : results) {
    ASSERT_TRUE(r.step_hang.has_value());
    EXPECT_LT(r.step_hang->waited_s, 8.0);  // each called before the other's debugger ended
    EXPECT_GE(r.duration_s, 8.0);           // and killed only once its stacks were taken
    EXPECT_EQ(r.stacks.method, "proc");
    EXPECT_NE(r.stacks.note.find("slow eu-stack: gave up"), std::string::npos) << r.stacks.note;
    expect_group_gone(r);
  }
}

TEST(Supervisor, DebuggersRunAtMostJobsAtOnce) {
  // One job slot: a parked hang frees it, so the second child starts and hangs while the first
  // one's (3 s) debugger runs. Its debugger must wait for the first: gdb on a libtorch process
  // takes hundreds of MiB.
  std::vector<ChildResult> results(2);
  SlowDebugger debugger(3, "slow eu-stack: gave up");
  Supervisor().run(step_hangs(2), 1, [&](size_t i, ChildResult&& r) { results[i] = std::move(r); });
  EXPECT_EQ(debugger.runs(), 2);
  EXPECT_EQ(debugger.most_at_once(), 1);
  // And it waited (queued), rather than the second hang coming only after the first debugger:
  // the second hang was called while the first debugger ran, so its debugger started as soon
  // as the first one ended.
  const auto starts = debugger.times("start"), ends = debugger.times("end");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_GE(ends.size(), 1u);
  EXPECT_LT(starts[1] - ends[0], 0.5)
      << "the second debugger started " << starts[1] - ends[0] << " s after the first ended";
  for (const auto& r : results) {
    ASSERT_TRUE(r.step_hang.has_value());
    EXPECT_NE(r.stacks.note.find("slow eu-stack: gave up"), std::string::npos) << r.stacks.note;
    expect_group_gone(r);
  }
}

// An interrupt while a hang's stacks are being taken: the run ends at once, not when the
// debugger would have, and the stacks say why they are short. Run in a child process of its own
// (an interrupt cannot be taken back): 0 when all held, else 1 (stderr says what was seen).
int interrupt_while_stacks_are_taken() {
  install_interrupt_handlers();
  SlowDebugger debugger(30, "never seen: interrupted first");
  LaunchSpec spec = step_hangs(1).front();
  spec.timeout_s = 60;
  std::thread interrupter([&] {
    // The hang is called ~1 s in; its debugger would then run for 30 s.
    for (int i = 0; i < 100 && debugger.runs() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGINT);
  });
  ChildResult r;
  Supervisor().run({spec}, 1, [&](size_t, ChildResult&& res) { r = std::move(res); });
  interrupter.join();
  const bool ok = debugger.runs() == 1 && r.step_hang.has_value() && r.interrupted_by == SIGINT &&
                  r.duration_s < 10 &&
                  r.stacks.note.find("forkcheck was interrupted before the debugger finished") !=
                      std::string::npos &&
                  !r.stacks.threads.empty() && group_members(r.pid).empty();
  std::fprintf(stderr, "debugger runs %d, interrupted_by %d, %.2f s, %zu threads, note: %s\n",
               debugger.runs(), r.interrupted_by, r.duration_s, r.stacks.threads.size(),
               r.stacks.note.c_str());
  return ok ? 0 : 1;
}

TEST(SupervisorDeathTest, InterruptWhileStacksAreTakenEndsAtOnceAndSaysSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(interrupt_while_stacks_are_taken()), ::testing::ExitedWithCode(0), "");
}

TEST(Supervisor, ChildThatEndsWhileItsStacksAreTakenDoesNotMakeTheLoopSpin) {
  // Called hung once its tree was still for a whole window (~1.25 s), its (slow, 4 s) debugger
  // starts; the child exits on its own at 2.5 s. Waiting for the debugger must not be a busy loop.
  ChildResult r;
  double cpu = 0;
  {
    SlowDebugger debugger(4, "slow eu-stack: gave up");
    const double cpu0 = own_cpu_s();
    r = run_child({"step-hang-exit", "2.5"}, /*timeout_s=*/30, /*grace_s=*/0.5, /*stacks=*/true);
    cpu = own_cpu_s() - cpu0;
  }
  ASSERT_TRUE(r.step_hang.has_value());
  EXPECT_GE(r.duration_s, 2.4);
  EXPECT_LT(cpu, 0.5) << "the supervisor used " << cpu << " s of CPU in " << r.duration_s << " s";
  EXPECT_FALSE(r.sent_sigterm);  // it had ended: no signal reached it
  EXPECT_TRUE(exited_by_itself(r));
  EXPECT_EQ(classify(r, true).outcome, Outcome::kError) << "its own end: exit 0 without a result";
  expect_group_gone(r);
}

// The order in which specs end, run with one job slot.
std::vector<size_t> end_order(const std::vector<std::vector<std::string>>& children) {
  std::vector<LaunchSpec> specs(children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    specs[i].argv = {FC_FAULT_CHILD};
    specs[i].argv.insert(specs[i].argv.end(), children[i].begin(), children[i].end());
    specs[i].collect_stacks = false;
  }
  std::vector<size_t> order;
  Supervisor().run(specs, 1, [&](size_t i, ChildResult&& r) {
    EXPECT_EQ(r.exit.code, 0) << r.err.text();
    order.push_back(i);
  });
  return order;
}

TEST(Supervisor, ChildIdleInAStepDoesNotHoldItsSlot) {
  // The first waits 3 s in a step without using the CPU: the second starts and ends meanwhile.
  EXPECT_EQ(end_order({{"step-wait", "3"}, {"exit", "0"}}), (std::vector<size_t>{1, 0}));
}

TEST(Supervisor, ChildIdleInAStepWhileItsWorkerComputesHoldsItsSlot) {
  // Its step is still, but its tree is not: the second waits for the slot.
  EXPECT_EQ(end_order({{"step-wait-busy-child", "1.5"}, {"exit", "0"}}),
            (std::vector<size_t>{0, 1}));
}

TEST(Supervisor, ChildWorkingInAStepHoldsItsSlot) {
  // The first computes for 1.5 s inside its step: the second waits for the slot.
  EXPECT_EQ(end_order({{"step-busy", "1.5"}, {"exit", "0"}}), (std::vector<size_t>{0, 1}));
}

TEST(Supervisor, ParkedChildrenDoNotStartMoreThanTwiceTheJobs) {
  // Two idle in their steps fill the twice-jobs limit: the third starts only when one ends.
  std::vector<LaunchSpec> specs(3);
  for (auto& s : specs) s.argv = {FC_FAULT_CHILD, "step-wait", "1.5"};
  std::vector<double> ended;
  const auto t0 = std::chrono::steady_clock::now();
  Supervisor().run(specs, 1, [&](size_t, ChildResult&&) {
    ended.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
  ASSERT_EQ(ended.size(), 3u);
  EXPECT_GE(ended[2], 2.9);  // 1.5 s after the first two (which overlapped), not beside them
}

}  // namespace
}  // namespace fc::harness
