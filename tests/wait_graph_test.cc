// Who waits on whom (harness/supervise/wait_graph.h), read from real processes deadlocked as
// programs deadlock: a parent joining a child whose write to a pipe only the parent would read
// never ends; two processes each reading a socket the other would write to; a parent joining a
// child that works on. Linux: /proc and sock_diag.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/wait_graph.h"
#include "launch/process_tree.h"

namespace fc::harness {
namespace {

using On = ThreadWaitFact::On;

// A process tree made by `body` in a forked root (which forks what it needs); killed at the end.
class Tree {
 public:
  explicit Tree(const std::function<void()>& body) {
    root_ = ::fork();
    if (root_ == 0) {
      ::setpgid(0, 0);
      body();
      ::_exit(0);
    }
    ::setpgid(root_, root_);
  }
  ~Tree() {
    ::kill(-root_, SIGKILL);
    ::waitpid(root_, nullptr, 0);
  }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  int root() const { return root_; }
  // The root and its children, once each of `n` processes has every thread asleep in a call
  // `settled` accepts; a failure after a minute (a wait that never settles, not a slow one).
  std::vector<int> settled(size_t n,
                           const std::function<bool(const WaitGraphFacts&)>& ready) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (;;) {
      std::vector<int> pids = {root_};
      for (int c : launch::child_processes(root_)) pids.push_back(c);
      if (pids.size() == n && ready(read_wait_graph(root_, pids))) return pids;
      if (std::chrono::steady_clock::now() > give_up) {
        ADD_FAILURE() << "the tree of " << root_ << " never settled";
        pids.resize(n, 0);  // no pid: what the test reads of it fails
        return pids;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  int root_ = -1;
};

bool all_waiting(const WaitGraphFacts& g) {
  for (const auto& t : g.threads)
    if (t.on == On::kRunning || t.on == On::kOther) return false;
  return !g.threads.empty();
}

TEST(WaitGraph, AJoinOnAChildWritingToAPipeOnlyItsParentReadsIsADeadlockAcrossTwo) {
  Tree tree([] {
    int fds[2];
    if (::pipe(fds) != 0) return;
    const pid_t child = ::fork();
    if (child == 0) {
      static char megabyte[1 << 20];
      // The pipe holds 64 KiB: the rest waits for a reader.
      (void)!::write(fds[1], megabyte, sizeof megabyte);
      ::_exit(0);
    }
    ::waitpid(child, nullptr, 0);  // joined before the pipe is drained
  });
  const auto pids = tree.settled(2, all_waiting);
  const WaitGraphFacts g = read_wait_graph(tree.root(), pids);
  const WaitChain c = follow_waits(g);
  ASSERT_EQ(c.links.size(), 2u);
  EXPECT_EQ(c.links[0].wait.on, On::kChild);
  EXPECT_EQ(c.links[0].wait.child, pids[1]);
  EXPECT_EQ(c.links[0].wait.call, "wait4");
  EXPECT_EQ(c.links[1].wait.pid, pids[1]);
  EXPECT_EQ(c.links[1].wait.call, "write");
  ASSERT_EQ(c.links[1].wait.files.size(), 1u);
  EXPECT_EQ(c.links[1].wait.files[0].kind, "pipe");
  EXPECT_TRUE(c.links[1].wait.files[0].to_write);
  EXPECT_GT(c.links[1].wait.bytes, 0u);
  EXPECT_LE(c.links[1].wait.bytes, 1u << 20);
  EXPECT_EQ(c.links[1].on, std::vector<int>{tree.root()}) << "the reader, less the writer itself";
  EXPECT_EQ(c.end, WaitChain::End::kCycle);
  EXPECT_EQ(c.end_pid, tree.root());
  EXPECT_TRUE(c.proven);
  EXPECT_EQ(c.closed.size(), 2u);
  const auto j = to_json(c, g);
  EXPECT_EQ(j["end"], "cycle");
  EXPECT_EQ(j["links"][1]["files"][0]["holders"].size(), 4u) << "both ends, in both processes";
}

TEST(WaitGraph, TwoProcessesEachReadingTheSocketTheOtherWouldWriteToAreFoundThroughThePeer) {
  Tree tree([] {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
    const pid_t child = ::fork();
    char byte = 0;
    if (child == 0) {
      ::close(sv[0]);
      (void)!::read(sv[1], &byte, 1);
      ::_exit(0);
    }
    ::close(sv[1]);
    (void)!::read(sv[0], &byte, 1);
  });
  const auto pids = tree.settled(2, all_waiting);
  const WaitGraphFacts g = read_wait_graph(tree.root(), pids);
  const WaitChain c = follow_waits(g);
  ASSERT_EQ(c.links.size(), 2u);
  EXPECT_EQ(c.links[0].wait.files.at(0).kind, "socket");
  EXPECT_FALSE(c.links[0].wait.files[0].to_write);
  EXPECT_EQ(c.links[0].on, std::vector<int>{pids[1]}) << "its peer's holder";
  EXPECT_EQ(c.end, WaitChain::End::kCycle);
  EXPECT_TRUE(c.proven);
}

TEST(WaitGraph, AJoinOnAChildThatWorksEndsAtTheWorkerAndIsNoDeadlock) {
  Tree tree([] {
    const pid_t child = ::fork();
    if (child == 0)
      for (volatile unsigned long i = 0;; i = i + 1) {
      }
    ::waitpid(child, nullptr, 0);
  });
  const auto pids = tree.settled(2, [](const WaitGraphFacts& g) {
    for (const auto& t : g.threads)
      if (t.tid == t.pid && t.on == On::kChild) return true;
    return false;
  });
  const WaitChain c = follow_waits(read_wait_graph(tree.root(), pids));
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.end, WaitChain::End::kWorking);
  EXPECT_EQ(c.end_pid, pids[1]);
  EXPECT_FALSE(c.proven);
}

TEST(WaitGraph, AReadOfAPipeWhoseWriterIsOutsideTheTreeNamesThatProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  Tree tree([fd = fds[0], other = fds[1]] {
    ::close(other);
    char byte = 0;
    (void)!::read(fd, &byte, 1);
  });
  ::close(fds[0]);
  const auto pids = tree.settled(1, all_waiting);
  const WaitGraphFacts g = read_wait_graph(tree.root(), pids);
  const WaitChain c = follow_waits(g);
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.end, WaitChain::End::kOutside);
  EXPECT_EQ(c.end_pid, ::getpid()) << "this test holds the write end";
  EXPECT_FALSE(g.processes.at(::getpid()).in_tree);
  ::close(fds[1]);
}

// A pid whose start time is not the one the look saw names another process (the tree's ended and
// the pid was reused): it is left out of the graph, never read as the tree's.
TEST(WaitGraph, APidThatNowNamesALaterProcessIsLeftOut) {
  // The child reads a pipe its parent holds the other end of (a pause() would be no settled
  // wait where the process catches signals, as an ASan build's does).
  Tree tree([] {
    int fds[2];
    if (::pipe(fds) != 0) return;
    const pid_t child = ::fork();
    if (child == 0) {
      char byte = 0;
      (void)!::read(fds[0], &byte, 1);
      ::_exit(0);
    }
    ::waitpid(child, nullptr, 0);
  });
  const auto pids = tree.settled(2, all_waiting);
  const auto child = launch::process_facts(pids[1]);
  ASSERT_TRUE(child);
  std::map<int, std::uint64_t> started = {{pids[1], child->start_time}};
  EXPECT_EQ(read_wait_graph(tree.root(), pids, {}, started).processes.count(pids[1]), 1u);
  started[pids[1]] = child->start_time + 1;  // as if the look had seen an earlier one
  const WaitGraphFacts g = read_wait_graph(tree.root(), pids, {}, started);
  EXPECT_EQ(g.processes.count(pids[1]), 0u);
  for (const auto& t : g.threads) EXPECT_NE(t.pid, pids[1]);
}

// The other end held by a process that is neither in the tree nor above it: found by the scan of
// every process, within its budget (a whole minute here, so that a loaded machine cannot make it
// miss); with no budget it stays unseen, and the chain ends there unknown, never outside.
TEST(WaitGraph, AnOtherEndHeldBesideTheTreeIsFoundByTheScanWithinItsBudgetAndUnseenWithout) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    ::close(fds[0]);
    ::pause();  // holds the write end
    ::_exit(0);
  }
  Tree tree([fd = fds[0], other = fds[1]] {
    ::close(other);
    char byte = 0;
    (void)!::read(fd, &byte, 1);
  });
  ::close(fds[0]);
  ::close(fds[1]);
  const auto pids = tree.settled(1, all_waiting);
  const auto began = std::chrono::steady_clock::now();
  const WaitGraphFacts g = read_wait_graph(tree.root(), pids, std::chrono::minutes(1));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  const WaitChain c = follow_waits(g);
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.end, WaitChain::End::kOutside);
  EXPECT_EQ(c.end_pid, holder);
  // A figure, not a check: what one read of the graph cost, the whole /proc scanned.
  RecordProperty("graph_read_ms", std::to_string(ms));
  std::cout << "the graph, every process scanned: " << ms << " ms\n";

  const WaitChain unseen = follow_waits(read_wait_graph(tree.root(), pids, {}));
  EXPECT_EQ(unseen.end, WaitChain::End::kUnknown);
  EXPECT_FALSE(unseen.proven);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
}

}  // namespace
}  // namespace fc::harness
