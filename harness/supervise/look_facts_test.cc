// What a look tells the watchdog (look_facts.h), on hand-built looks.
#include <chrono>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/look_facts.h"

namespace fc::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Process `pid` with threads {tid: {state, cpu}}; 'Z': a zombie.
void add(launch::TreeLook& l, launch::ProcessId pid, char state,
         const std::vector<std::pair<char, std::uint64_t>>& threads) {
  launch::TreeLook::Process p;
  p.facts.pid = pid;
  p.facts.state = state;
  int tid = pid * 10;
  for (const auto& [s, cpu] : threads) {
    launch::ThreadFacts t;
    t.state = s;
    t.cpu_ns = cpu;
    p.threads[tid++] = t;
  }
  l.processes.emplace(pid, std::move(p));
}

TEST(LookFacts, AProcessSleepsThroughOnlyIfEveryThreadSleptWithNoCpuSinceTheLookBefore) {
  launch::TreeLook before, after;
  add(before, 1, 'S', {{'S', 5}, {'D', 9}});  // both asleep, no CPU since: asleep
  add(after, 1, 'S', {{'S', 5}, {'D', 9}});
  add(before, 2, 'S', {{'S', 5}, {'S', 9}});  // one thread used CPU: not asleep
  add(after, 2, 'S', {{'S', 5}, {'S', 10}});
  add(before, 3, 'R', {{'R', 5}});  // running: not asleep
  add(after, 3, 'R', {{'R', 5}});
  add(after, 4, 'S', {{'S', 5}});   // new since the look before: not known to be asleep
  add(before, 5, 'S', {{'S', 1}});  // a thread new since the look before: not known either
  add(after, 5, 'S', {{'S', 1}, {'S', 0}});
  add(before, 6, 'S', {{'S', 1}});  // a zombie: not alive
  add(after, 6, 'Z', {});
  add(before, 7, 'S', {{'S', 1}});  // no thread read: not known
  add(after, 7, 'S', {});
  LookFacts f;
  count_processes(before, after, f);
  EXPECT_EQ(f.processes, 6u);
  EXPECT_EQ(f.pids, (std::vector<launch::ProcessId>{1, 2, 3, 4, 5, 7}));
  EXPECT_EQ(f.asleep, (std::set<launch::ProcessId>{1}));
}

TEST(LookFacts, ASleeperGoesAmongTheOthersFirstToWakeFirstAnUnknownEndLast) {
  const auto t0 = Clock::time_point() + 100s;
  const auto sleeper = [&](int tid, std::optional<Clock::duration> ends_in) {
    SleepingThread t;
    t.tid = tid;
    if (ends_in) t.ends = t0 + *ends_in;
    return t;
  };
  std::vector<SleepingThread> s;
  add_sleeper(s, sleeper(1, std::nullopt));
  add_sleeper(s, sleeper(2, 5s));
  add_sleeper(s, sleeper(3, 1s));
  add_sleeper(s, sleeper(4, 5s));  // after the one of the same end already there
  add_sleeper(s, sleeper(5, std::nullopt));
  std::vector<int> order;
  for (const auto& t : s) order.push_back(t.tid);
  EXPECT_EQ(order, (std::vector<int>{3, 2, 4, 1, 5}));
}

}  // namespace
}  // namespace fc::harness
