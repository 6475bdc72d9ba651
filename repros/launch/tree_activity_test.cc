// The rule behind `hang` and `timeout` (launch/tree_activity.h), on looks made up here, and the
// process tree it is fed from (launch/process_tree.h), on real processes.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "launch/process_tree.h"
#include "launch/tree_activity.h"

namespace fc::launch {
namespace {

using namespace std::chrono_literals;
using Clock = TreeActivity::Clock;

constexpr std::uint64_t kMs = 1000000;  // ns

// Looks every 250 ms from `t` for `seconds`, each with `cpu_ns`; returns the time of the last.
Clock::time_point feed(TreeActivity& a, Clock::time_point t, double seconds,
                       std::uint64_t cpu_ns = 0) {
  const int n = static_cast<int>(std::lround(seconds / 0.25));
  for (int i = 0; i < n; ++i) {
    t += 250ms;
    a.look(t, cpu_ns, false);
  }
  return t;
}

TEST(TreeActivity, QuietThroughTheWindowIsBlocked) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  EXPECT_FALSE(a.blocked()) << "nothing seen yet";
  auto t = feed(a, t0, 3.0);
  EXPECT_TRUE(a.blocked());
  EXPECT_EQ(a.still_for(), t - t0);
  EXPECT_EQ(a.cpu_in_window_ns(), 0u);
  EXPECT_EQ(a.looks(), 13u);
}

TEST(TreeActivity, WorkingTreeIsNeverBlocked) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  feed(a, t0, 5.0, 100 * kMs);  // 40% of a CPU
  EXPECT_FALSE(a.blocked());
  EXPECT_EQ(a.still_for(), Clock::duration::zero());
  EXPECT_EQ(a.cpu_in_window_ns(), 400 * kMs);
  EXPECT_EQ(a.longest_still(), Clock::duration::zero());
}

TEST(TreeActivity, APollerUnderOnePercentIsBlocked) {
  // 2 ms once a second (a status check): 0.2% of a CPU.
  TreeActivity a;
  auto t = Clock::now();
  a.start(t);
  for (int i = 0; i < 20; ++i) {
    t += 250ms;
    a.look(t, i % 4 == 0 ? 2 * kMs : 0, false);
  }
  EXPECT_TRUE(a.blocked());
}

TEST(TreeActivity, JustOverOnePercentIsWorking) {
  // 11 ms a second: 1.1% of a CPU.
  TreeActivity a;
  auto t = Clock::now();
  a.start(t);
  for (int i = 0; i < 20; ++i) {
    t += 250ms;
    a.look(t, i % 4 == 0 ? 11 * kMs : 0, false);
  }
  EXPECT_FALSE(a.blocked());
}

TEST(TreeActivity, WorkResumingEndsTheStillStretchAndAFullWindowStartsANewOne) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  auto t = feed(a, t0, 5.0);
  ASSERT_TRUE(a.blocked());
  // One busy look after five still seconds: 50 ms is under 1% of those 5 s, but not of the window.
  t += 250ms;
  a.look(t, 50 * kMs, false);
  EXPECT_FALSE(a.blocked());
  EXPECT_EQ(a.still_for(), Clock::duration::zero());
  t = feed(a, t, 0.75);
  EXPECT_FALSE(a.blocked()) << "the busy look is still within the window";
  t = feed(a, t, 0.25);
  EXPECT_TRUE(a.blocked());
  EXPECT_EQ(a.still_for(), std::chrono::duration_cast<Clock::duration>(1000ms));
  EXPECT_EQ(a.longest_still(), std::chrono::duration_cast<Clock::duration>(5000ms));
}

TEST(TreeActivity, OutputIsActivity) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  auto t = feed(a, t0, 2.0);
  ASSERT_TRUE(a.blocked());
  a.output(t + 100ms);  // a line on stdout between two looks
  t = feed(a, t, 0.25);
  EXPECT_FALSE(a.blocked());
  t = feed(a, t, 1.0);
  EXPECT_TRUE(a.blocked());
}

TEST(TreeActivity, AProcessComingOrGoingIsActivity) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  auto t = feed(a, t0, 2.0);
  t += 250ms;
  a.look(t, 0, /*membership_changed=*/true);
  EXPECT_FALSE(a.blocked());
  feed(a, t, 1.0);
  EXPECT_TRUE(a.blocked());
}

TEST(TreeActivity, ATreeWatchedLessThanTwoWindowsIsJudgedOnTheLaterHalf) {
  // A deadline of half a second, quiet from the first look.
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  feed(a, t0, 0.5);
  EXPECT_TRUE(a.blocked());
  TreeActivity b;
  b.start(t0);
  feed(b, t0, 0.5, 20 * kMs);
  EXPECT_FALSE(b.blocked());
  // A deadline of one second: its start (threads created, 30 ms of loading) is not held against
  // it; the later half was quiet.
  TreeActivity c;
  c.start(t0);
  auto t = t0 + 250ms;
  c.look(t, 30 * kMs, /*membership_changed=*/true);
  EXPECT_FALSE(c.blocked()) << "one look: it is all there is to judge";
  t = feed(c, t, 0.75);
  EXPECT_TRUE(c.blocked());
  EXPECT_EQ(c.window(), std::chrono::duration_cast<Clock::duration>(500ms));
  EXPECT_EQ(c.cpu_in_window_ns(), 0u);
  // A stalled step asks for a whole window: half a second of stillness is not enough.
  EXPECT_FALSE(c.blocked_through_window());
  feed(c, t, 0.5);
  EXPECT_TRUE(c.blocked_through_window());
}

TEST(TreeActivity, AShorterSpanCanBeQuietWhenTheWindowIsNot) {
  // What the scheduler asks (quiet for half a second), beside the stall window.
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  auto t = feed(a, t0, 1.0, 100 * kMs);
  t = feed(a, t, 0.5);
  EXPECT_TRUE(a.quiet_over(500ms));
  EXPECT_FALSE(a.blocked());
}

TEST(TreeActivity, AThreadWantingACpuIsStarvedNotBlocked) {
  // Next to no CPU, nothing coming or going: but a thread was runnable at every look (a loaded
  // machine). Not blocked; starved, and for how long.
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  TreeChange c;
  c.cpu_ns = 1 * kMs;  // 0.4% of a CPU
  c.wanted_cpu = true;
  auto t = t0;
  for (int i = 0; i < 12; ++i) a.look(t += 250ms, c);
  EXPECT_FALSE(a.blocked());
  EXPECT_EQ(a.still_for(), Clock::duration::zero());
  EXPECT_EQ(a.starved_for(), t - t0);
  // Getting a CPU (half of one or more) ends it.
  c.cpu_ns = 200 * kMs;
  a.look(t += 250ms, c);
  EXPECT_EQ(a.starved_for(), Clock::duration::zero());
  EXPECT_EQ(a.longest_starved(), std::chrono::duration_cast<Clock::duration>(3000ms));
}

TEST(TreeActivity, AStoppedProcessIsNotBlocked) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  TreeChange c;
  c.stopped = true;
  auto t = t0;
  for (int i = 0; i < 8; ++i) a.look(t += 250ms, c);
  EXPECT_FALSE(a.blocked()) << "stopped by a signal or a tracer: not stuck in its own code";
  EXPECT_TRUE(a.stopped());
}

TEST(TreeActivity, WhileForkcheckHoldsItOnlyCpuAndEventsCount) {
  // Our debugger's stop makes threads traced (t) and runnable when it lets go: not the program's.
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  TreeChange held;
  held.wanted_cpu = true;
  held.stopped = true;
  auto t = t0;
  for (int i = 0; i < 8; ++i) a.look(t += 250ms, held, /*held=*/true);
  EXPECT_TRUE(a.blocked());
  EXPECT_EQ(a.starved_for(), Clock::duration::zero());
}

TEST(TreeActivity, ARestartForgetsWhatCameBefore) {
  TreeActivity a;
  const auto t0 = Clock::now();
  a.start(t0);
  auto t = feed(a, t0, 3.0);
  ASSERT_TRUE(a.blocked());
  t += 10s;  // stopped together with forkcheck (Ctrl-Z)
  a.restart(t);
  EXPECT_FALSE(a.blocked());
  EXPECT_EQ(a.still_for(), Clock::duration::zero());
  feed(a, t, 1.0);
  EXPECT_TRUE(a.blocked());
  EXPECT_EQ(a.still_for(), std::chrono::duration_cast<Clock::duration>(1000ms));
}

TEST(CompareLooks, AThreadStarvedOutrightOrAGrowingRunQueueWaitWantsACpuAndTStateIsStopped) {
  auto look = [](Clock::time_point at, char state, std::uint64_t cpu, std::uint64_t delay) {
    TreeLook l;
    l.at = at;
    TreeLook::Process p;
    p.facts.pid = 5;
    p.facts.start_time = 1;
    p.facts.state = 'S';
    ThreadFacts t;
    t.state = state;
    t.cpu_ns = cpu;
    t.run_delay_ns = delay;
    t.run_delay_known = true;
    p.threads[5] = t;
    l.processes[5] = p;
    return l;
  };
  const auto t0 = Clock::now();
  EXPECT_FALSE(compare_looks(look(t0, 'S', 0, 0), look(t0 + 250ms, 'S', 0, 10 * kMs)).wanted_cpu)
      << "10 ms on a run queue in 250 ms: a poller's wake-ups";
  EXPECT_TRUE(compare_looks(look(t0, 'S', 0, 0), look(t0 + 250ms, 'S', 0, 70 * kMs)).wanted_cpu)
      << "a quarter of the interval or more";
  EXPECT_TRUE(compare_looks(look(t0, 'R', 0, 0), look(t0 + 250ms, 'R', 0, 0)).wanted_cpu)
      << "runnable at both looks, not run between: starved outright, its wait not yet counted";
  EXPECT_FALSE(compare_looks(look(t0, 'S', 0, 0), look(t0 + 250ms, 'R', 0, 0)).wanted_cpu)
      << "caught runnable once: a poller's wake-up";
  EXPECT_FALSE(compare_looks(look(t0, 'R', 0, 0), look(t0 + 250ms, 'R', 1000, 0)).wanted_cpu)
      << "it ran between";
  const auto stopped = compare_looks(look(t0, 'S', 0, 0), look(t0 + 250ms, 'T', 0, 0));
  EXPECT_TRUE(stopped.stopped);
  EXPECT_FALSE(stopped.wanted_cpu);
  EXPECT_EQ(compare_looks(look(t0, 'S', 0, 5), look(t0 + 250ms, 'S', 0, 70 * kMs)).run_delay_ns,
            70 * kMs - 5);
}

// ---- the tree itself, on real processes -------------------------------------------------

// Blocks until `fd` has a byte (a child says it is ready).
[[maybe_unused]] void wait_byte(int fd) {
  char c;
  ASSERT_EQ(::read(fd, &c, 1), 1);
}

// Kills the processes it holds when the test ends, passed or not.
struct KillAtEnd {
  std::vector<pid_t> pids;
  ~KillAtEnd() {
    for (pid_t p : pids) ::kill(p, SIGKILL);
    for (pid_t p : pids) ::waitpid(p, nullptr, WNOHANG);
  }
};

TEST(ProcessTree, FindsAGrandchildThatLeftTheGroupAndTheSession) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();
      const pid_t self = ::getpid();
      [[maybe_unused]] ssize_t n = ::write(ready[1], &self, sizeof self);
      for (;;) ::pause();
    }
    for (;;) ::pause();
  }
  KillAtEnd cleanup{{child}};
  pid_t grandchild = 0;
  ASSERT_EQ(::read(ready[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  cleanup.pids.push_back(grandchild);
  ::close(ready[0]);
  ::close(ready[1]);
  TreeLook look = look_at_tree({child});
  ASSERT_EQ(look.processes.size(), 2u);
  ASSERT_TRUE(look.processes.count(grandchild));
  EXPECT_EQ(look.processes[grandchild].facts.ppid, child);
  EXPECT_EQ(look.processes[grandchild].facts.sid, grandchild);
  EXPECT_NE(look.processes[grandchild].facts.pgid, child);
  EXPECT_GT(look.processes[grandchild].facts.start_time, 0u);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(ProcessTree, ThreadCpuTimeMovesForABusyThreadAndNotForASleepingOne) {
  // The busy thread spins until its own clock says it used 150 ms of CPU after the first look:
  // however loaded the machine (a 200 ms sleep gave it 86 ms once, in CI), the second look comes
  // after that much CPU.
  std::atomic<bool> stop{false}, go{false}, spent{false};
  std::thread busy([&] {
    auto thread_cpu_ns = [] {
      timespec ts{};
      ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
    };
    volatile unsigned long x = 0;
    while (!go) x = x + 1;
    const long long from = thread_cpu_ns();
    while (!stop) {
      x = x + 1;
      if (!spent && thread_cpu_ns() - from >= 150 * static_cast<long long>(kMs)) spent = true;
    }
  });
  std::thread sleeper([&] {
    while (!stop) std::this_thread::sleep_for(10ms);
  });
  const TreeLook a = look_at_tree({::getpid()});
  go = true;
  while (!spent) std::this_thread::sleep_for(5ms);
  const TreeLook b = look_at_tree({::getpid()});
  stop = true;
  busy.join();
  sleeper.join();
  const TreeChange c = compare_looks(a, b);
  EXPECT_GE(c.cpu_ns, 150 * kMs) << "a busy thread's 150 ms of CPU between the looks";
  EXPECT_FALSE(c.membership_changed);
  const TreeLook after = look_at_tree({::getpid()});
  EXPECT_TRUE(compare_looks(b, after).membership_changed) << "two threads ended";
}

TEST(ProcessTree, AZombieIsSeenAsOneAndItsExitIsAChange) {
  const pid_t child = ::fork();
  if (child == 0) {
    std::this_thread::sleep_for(100ms);
    ::_exit(0);
  }
  const TreeLook before = look_at_tree({child});
  ASSERT_EQ(before.processes.size(), 1u);
  EXPECT_FALSE(before.processes.at(child).facts.zombie());
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  const TreeLook after = look_at_tree({child});
  ASSERT_EQ(after.processes.size(), 1u);
  EXPECT_TRUE(after.processes.at(child).facts.zombie());
  EXPECT_TRUE(compare_looks(before, after).membership_changed);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(look_at_tree({child}).processes.empty());
}

#ifdef __linux__
TEST(ProcessTree, OrphansOfADeadParentAreFoundAmongTheSubreapersChildren) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::fork() == 0) {
      [[maybe_unused]] ssize_t n = ::write(ready[1], "g", 1);
      for (;;) ::pause();
    }
    ::_exit(0);  // its child is re-parented to the subreaper: the test
  }
  wait_byte(ready[0]);
  ::waitpid(child, nullptr, 0);
  pid_t orphan = 0;
  for (int i = 0; i < 100 && orphan == 0; ++i) {
    for (ProcessId p : child_processes(::getpid()))
      if (auto f = process_facts(p); f && !f->zombie()) orphan = p;
    if (orphan == 0) std::this_thread::sleep_for(10ms);
  }
  ASSERT_NE(orphan, 0);
  EXPECT_EQ(process_facts(orphan)->ppid, ::getpid());
  ::kill(orphan, SIGKILL);
  ::waitpid(orphan, nullptr, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}
#endif

}  // namespace
}  // namespace fc::launch
