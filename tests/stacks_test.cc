// Stacks of a hung tree: each way of taking them on a real two-mutex deadlock (fault_child
// deadlock). The parsers, on captured debugger output, are tested beside them
// (harness/stacks/stack_parsers_test.cc).
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "harness/supervise/classify.h"
#include "harness/supervise/supervisor.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

// Each way of taking stacks, on a process deadlocked on two mutexes (three
// threads: main joining, two lockers each waiting for the other's mutex).
class LiveStacks : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ::setenv("FORKCHECK_STACKS", GetParam().c_str(), 1); }
  void TearDown() override { ::unsetenv("FORKCHECK_STACKS"); }
  ChildResult deadlock() {
    LaunchSpec spec;
    spec.argv = {FC_FAULT_CHILD, "deadlock"};
    // Time called by the stall (1 s still), so that the debugger has the spec's whole budget: at
    // a deadline it would get what is left of the deadline's promise (0.8 s), which gdb under ASan
    // on a busy machine overran (the stacks were then /proc's).
    spec.timeout_s = 120;
    spec.hang_after_s = 1;
    spec.stacks_budget_s = 60;
    spec.grace_s = 0.5;
    return supervise(spec);
  }
};

TEST_P(LiveStacks, DeadlockedThreadsAreNamedWhereTheyAreStuck) {
  const std::string tool = GetParam();
  if (tool != "proc" && bp::search_path(tool).empty())
    GTEST_SKIP() << tool << " is not installed (ci/install-deps-debian.sh installs it)";
  auto r = deadlock();
  EXPECT_EQ(classify(r, false).outcome, Outcome::kHang);
  EXPECT_EQ(r.stacks.method, tool) << r.stacks.note;
  ASSERT_EQ(r.stacks.threads.size(), 3u) << r.stacks.note;
  for (const auto& t : r.stacks.threads) {
    EXPECT_EQ(t.pid, r.pid);
    EXPECT_EQ(t.state, "S") << "every thread is asleep in the deadlock";
    EXPECT_FALSE(t.name.empty());
  }
  if (tool == "proc") {
    EXPECT_NE(r.stacks.note.find("FORKCHECK_STACKS=proc"), std::string::npos) << r.stacks.note;
    return;
  }
  EXPECT_TRUE(r.stacks.note.empty()) << r.stacks.note;
  // Each locker thread's own stack names the function it is stuck in, and only
  // that one.
  int a = 0, b = 0;
  for (const auto& t : r.stacks.threads) {
    bool ta = false, tb = false;
    for (const auto& f : t.frames) {
      ta = ta || f.function.find("lock_a_then_b") != std::string::npos;
      tb = tb || f.function.find("lock_b_then_a") != std::string::npos;
    }
    EXPECT_FALSE(ta && tb);
    a += ta;
    b += tb;
  }
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
}

TEST(LiveStacksNone, NoneTakesNoStacksAndSaysSo) {
  ::setenv("FORKCHECK_STACKS", "none", 1);
  LaunchSpec spec;
  spec.argv = {FC_FAULT_CHILD, "deadlock"};
  spec.timeout_s = 1;
  spec.grace_s = 0.5;
  auto r = supervise(spec);
  ::unsetenv("FORKCHECK_STACKS");
  EXPECT_EQ(r.stacks.method, "none");
  EXPECT_TRUE(r.stacks.threads.empty());
  EXPECT_NE(r.stacks.note.find("FORKCHECK_STACKS=none"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(EachTool, LiveStacks, ::testing::Values("eu-stack", "gdb", "proc"),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace fc::harness
