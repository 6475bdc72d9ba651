// Following a tree's waits (wait_graph.h: follow_waits) on made-up graphs: where a chain ends, and
// when a deadlock is proven (only where every wait reached is known and inside the tree).
#include "harness/supervise/wait_graph.h"

#include <gtest/gtest.h>

namespace fc::harness {
namespace {

using On = ThreadWaitFact::On;

ThreadWaitFact wait(int pid, int tid, On on, int child = 0) {
  ThreadWaitFact t;
  t.pid = pid;
  t.tid = tid;
  t.on = on;
  t.child = child;
  t.call = on == On::kChild ? "wait4" : "futex";
  return t;
}

ThreadWaitFact pipe_wait(int pid, int tid, std::uint64_t inode, bool to_write) {
  ThreadWaitFact t = wait(pid, tid, On::kFiles);
  t.call = to_write ? "write" : "read";
  t.files.push_back({3, "pipe", inode, to_write});
  return t;
}

WaitGraphFacts graph(std::vector<ThreadWaitFact> threads, std::map<int, int> parents) {
  WaitGraphFacts g;
  g.read = true;
  g.root = parents.begin()->first;
  for (const auto& [pid, ppid] : parents) g.processes[pid] = {ppid, "p", true};
  g.threads = std::move(threads);
  return g;
}

TEST(WaitChain, APipeWhoseOtherEndOnlyTheWaiterHoldsEndsAtItself) {
  // A queue's get() in a process whose only writer of that pipe is itself: nobody else will write.
  auto g = graph({pipe_wait(10, 10, 7, false)}, {{10, 1}});
  g.holders[7] = {{10, 3, true, false}, {10, 4, false, true}};
  const WaitChain c = follow_waits(g);
  EXPECT_TRUE(c.links.empty());
  EXPECT_EQ(c.end, WaitChain::End::kSelf);
  EXPECT_FALSE(c.proven) << "one process: the watchdog's stuck, not a chain";
}

TEST(WaitChain, AWaitForAnyChildFollowsToTheChildrenAndASharedLockToTheWholeTree) {
  auto g = graph(
      {wait(10, 10, On::kAnyChild), wait(11, 11, On::kSharedFutex), wait(12, 12, On::kSharedFutex)},
      {{10, 1}, {11, 10}, {12, 10}});
  const WaitChain c = follow_waits(g);
  // 10 -> its children; 11 -> 10 or 12: 12 not yet in the chain, so on to it; 12 -> 10 or 11.
  ASSERT_EQ(c.links.size(), 3u);
  EXPECT_EQ(c.links[0].on, (std::vector<int>{11, 12}));
  EXPECT_EQ(c.links[2].wait.pid, 12);
  EXPECT_EQ(c.end, WaitChain::End::kCycle);
  EXPECT_TRUE(c.proven);
  EXPECT_EQ(c.closed, (std::vector<int>{10, 11, 12}));
}

TEST(WaitChain, AnUnknownWaitOrATimedOneAnywhereInReachMeansNoProof) {
  auto other = graph({wait(10, 10, On::kChild, 11), wait(11, 11, On::kChild, 12),
                      wait(12, 12, On::kOther), wait(12, 13, On::kSharedFutex)},
                     {{10, 1}, {11, 10}, {12, 11}});
  WaitChain c = follow_waits(other);
  EXPECT_FALSE(c.proven);
  EXPECT_TRUE(c.closed.empty());
  auto timed = graph({wait(10, 10, On::kChild, 11), wait(11, 11, On::kTimed)}, {{10, 1}, {11, 10}});
  c = follow_waits(timed);
  EXPECT_EQ(c.end, WaitChain::End::kAsleep);
  EXPECT_EQ(c.end_pid, 11);
  EXPECT_FALSE(c.proven);
}

TEST(WaitChain, AMainThreadJoiningItsOwnThreadIsShownBeforeTheThreadThatWaitsOutside) {
  auto g = graph(
      {wait(10, 10, On::kChild, 11), wait(11, 11, On::kOwnProcess), pipe_wait(11, 12, 5, true)},
      {{10, 1}, {11, 10}});
  g.holders[5] = {{10, 3, true, false}, {11, 3, true, false}, {11, 4, false, true}};
  const WaitChain c = follow_waits(g);
  ASSERT_EQ(c.links.size(), 3u);
  EXPECT_EQ(c.links[1].wait.tid, 11);
  EXPECT_EQ(c.links[1].wait.on, On::kOwnProcess);
  EXPECT_EQ(c.links[2].wait.tid, 12);
  EXPECT_EQ(c.links[2].on, std::vector<int>{10});
  EXPECT_EQ(c.end, WaitChain::End::kCycle);
  EXPECT_TRUE(c.proven);
}

TEST(WaitChain, APipeWhoseOtherEndNoVisibleProcessHoldsIsNotKnownNeverSelf) {
  // Its writer in another PID namespace (docker exec -i): the read would have seen EOF had
  // nobody held the write end.
  auto g = graph({wait(10, 10, On::kChild, 11), pipe_wait(11, 11, 7, false)}, {{10, 1}, {11, 10}});
  g.holders[7] = {{11, 0, true, false}};
  const WaitChain c = follow_waits(g);
  EXPECT_EQ(c.end, WaitChain::End::kUnknown);
  EXPECT_FALSE(c.proven);
  EXPECT_NE(c.unproven.find("whose other side was not seen"), std::string::npos) << c.unproven;
}

TEST(WaitChain, AWaitOthersCanStillEndIsFollowedToThemNotCalledACycle) {
  // 10 waits for its children; 11 on a shared lock that 12, asleep, may release.
  auto g =
      graph({wait(10, 10, On::kAnyChild), wait(11, 11, On::kSharedFutex), wait(12, 12, On::kTimed)},
            {{10, 1}, {11, 10}, {12, 10}});
  const WaitChain c = follow_waits(g);
  EXPECT_EQ(c.end, WaitChain::End::kAsleep);
  EXPECT_EQ(c.end_pid, 12);
  EXPECT_FALSE(c.proven);
}

TEST(WaitChain, AProcessThatCatchesATimersSignalIsNeverPartOfAProof) {
  auto g = graph(
      {wait(10, 10, On::kChild, 11), wait(11, 11, On::kChild, 12), pipe_wait(12, 12, 5, false)},
      {{10, 1}, {11, 10}, {12, 11}});
  g.holders[5] = {{10, 3, false, true}, {12, 4, true, false}};
  EXPECT_TRUE(follow_waits(g).proven);
  g.processes[10].timer_handler = true;  // alarm() armed: its handler may write
  const WaitChain c = follow_waits(g);
  EXPECT_FALSE(c.proven);
  EXPECT_NE(c.unproven.find("pid 10 catches a timer's signal"), std::string::npos) << c.unproven;
}

TEST(WaitChain, NotReadSaysWhyAndFollowsNothing) {
  WaitGraphFacts g;
  g.why_not = "read on Linux only";
  const WaitChain c = follow_waits(g);
  EXPECT_TRUE(c.links.empty());
  EXPECT_EQ(to_json(c, g)["read"], false);
  EXPECT_EQ(to_json(c, g)["why_not"], "read on Linux only");
}

}  // namespace
}  // namespace fc::harness
