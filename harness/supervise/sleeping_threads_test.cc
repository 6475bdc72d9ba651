// Which threads sleep in a wait that ends by itself (sleeping_threads.h), on hand-built looks.
#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/sleeping_threads.h"

namespace fc::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// One process, pid 7, with one thread, 700, in state `state` having used `cpu` ns.
launch::TreeLook tree(Clock::time_point at, char state, std::uint64_t cpu) {
  launch::TreeLook l;
  l.at = at;
  launch::TreeLook::Process p;
  p.facts.pid = 7;
  p.facts.start_time = 100;
  p.facts.state = state;
  p.facts.name = "python3";
  launch::ThreadFacts t;
  t.state = state;
  t.cpu_ns = cpu;
  p.threads[700] = t;
  l.processes.emplace(7, std::move(p));
  return l;
}

launch::ThreadWait timed(double ends_in_s, bool exact = false) {
  launch::ThreadWait w;
  w.syscall = 230;
  w.timed = true;
  w.ends_in_s = ends_in_s;
  w.ends_in_exact = exact;
  return w;
}

struct Reader {
  std::optional<launch::ThreadWait> wait;
  SleepingThreads::WaitReader get() {
    return [this](launch::ProcessId, int) { return wait; };
  }
};

const auto t0 = Clock::time_point() + 100s;

TEST(SleepingThreads, ALongTimedWaitCountsFromTheFirstLookThatFindsIt) {
  Reader read{timed(8.0)};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  const auto found = s.sleeping();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, 7);
  EXPECT_EQ(found[0].tid, 700);
  EXPECT_EQ(found[0].process, "python3");
  EXPECT_EQ(found[0].since, t0) << "asleep since the look before, with no CPU between";
  ASSERT_TRUE(found[0].ends);
  EXPECT_EQ(*found[0].ends, t0 + 250ms + 8s) << "at the latest: a relative timeout";
  EXPECT_FALSE(found[0].ends_exact);
}

TEST(SleepingThreads, APollerThatWakesOftenNeverCounts) {
  // sleep(0.5) in a loop: caught asleep through one interval, but known shorter than a window.
  Reader read{timed(0.5)};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  EXPECT_TRUE(s.sleeping().empty());
  // One that ran between two looks (every 100 ms) is never even read.
  read.wait = timed(8.0);
  s.look(tree(t0 + 250ms, 'S', 5), tree(t0 + 500ms, 'S', 6));
  EXPECT_TRUE(s.sleeping().empty()) << "it ran: one nanosecond of CPU";
  s.look(tree(t0 + 500ms, 'S', 6), tree(t0 + 750ms, 'R', 6));
  EXPECT_TRUE(s.sleeping().empty()) << "runnable";
}

TEST(SleepingThreads, AnUntimedWaitNeverCounts) {
  launch::ThreadWait forever;
  forever.syscall = 202;
  forever.untimed_private_futex = true;
  Reader read{forever};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  EXPECT_TRUE(s.sleeping().empty());
  read.wait = std::nullopt;  // not in a system call, or not readable
  s.look(tree(t0 + 250ms, 'S', 5), tree(t0 + 500ms, 'S', 5));
  EXPECT_TRUE(s.sleeping().empty());
}

TEST(SleepingThreads, AWaitOfUnknownLengthCountsAtOnce) {
  // restart_syscall: a sleep resumed after a stop, its timeout no longer shown.
  Reader read{timed(-1)};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  ASSERT_EQ(s.sleeping().size(), 1u);
  EXPECT_FALSE(s.sleeping()[0].ends);
}

TEST(SleepingThreads, ALongWaitStaysCountedToItsEndAndAnotherStartsAnew) {
  Reader read{timed(1.5, /*exact=*/true)};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  ASSERT_EQ(s.sleeping().size(), 1u);
  // Its last half second: still the same wait (no CPU since), still counted, still ending when
  // first read.
  read.wait = timed(0.5, true);
  s.look(tree(t0 + 250ms, 'S', 5), tree(t0 + 1250ms, 'S', 5));
  ASSERT_EQ(s.sleeping().size(), 1u);
  EXPECT_EQ(*s.sleeping()[0].ends, t0 + 1750ms);
  EXPECT_TRUE(s.sleeping()[0].ends_exact);
  EXPECT_EQ(s.sleeping()[0].since, t0);
  // It woke (CPU), then slept again: a new wait, since the look before this one.
  read.wait = timed(3.0, true);
  s.look(tree(t0 + 1250ms, 'S', 5), tree(t0 + 1500ms, 'S', 9));
  EXPECT_TRUE(s.sleeping().empty());
  s.look(tree(t0 + 1500ms, 'S', 9), tree(t0 + 1750ms, 'S', 9));
  ASSERT_EQ(s.sleeping().size(), 1u);
  EXPECT_EQ(s.sleeping()[0].since, t0 + 1500ms);
}

TEST(SleepingThreads, OurDebuggersVisitChangesNothing) {
  Reader read{timed(8.0)};
  SleepingThreads s(read.get());
  s.look(tree(t0, 'S', 5), tree(t0 + 250ms, 'S', 5));
  s.look(tree(t0 + 250ms, 'S', 5), tree(t0 + 500ms, 't', 6), /*held=*/true);
  ASSERT_EQ(s.sleeping().size(), 1u);
  EXPECT_EQ(s.sleeping()[0].since, t0);
}

}  // namespace
}  // namespace fc::harness
