// What every OS's job does the same way (job_core.h), and how many debuggers run at once
// (debugger_slots.h).
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/debugger_slots.h"
#include "harness/supervise/job_core.h"

namespace fc::harness {
namespace {

using namespace std::chrono_literals;

class NoControl : public TreeControl {
 public:
  void look_now() override {}
  void take_stacks(const StacksRequest&) override {}
  void stop_stacks(const std::string&) override {}
  void describe(TreeFacts&) override {}
  Sent ask_to_end() override { return Sent::kNothing; }
  bool kill_all() override { return false; }
};

struct Core {
  LaunchSpec spec;
  NoControl control;
  std::vector<std::string> told;  // what on_output was given, "1:bytes" / "2:bytes"
  std::optional<JobCore> job;
  const Clock::time_point t0 = Clock::time_point() + 1000s;
  Core() {
    spec.argv = {"python3", "train.py"};
    spec.timeout_s = 30;
    spec.capture_cap = 8;
    spec.on_output = [this](int stream, const char* b, size_t n) {
      told.push_back(std::to_string(stream) + ":" + std::string(b, n));
    };
    job.emplace(3, spec);
    job->start = t0;
    job->watch(control);
  }
};

TEST(JobCore, OutputGoesToItsCaptureItsChannelAndTheSpecsCallback) {
  Core c;
  EXPECT_EQ(c.job->index, 3u);
  EXPECT_EQ(c.job->r.timeout_s, 30);
  c.job->output(0, "hello", 5, c.t0 + 1s);
  c.job->output(1, "a long error line", 17, c.t0 + 1s);
  const std::string line = R"({"ev":"result","outcome":"ok","details":{"b":2}})"
                           "\n";
  c.job->output(2, line.data(), line.size(), c.t0 + 2s);
  EXPECT_EQ(c.job->r.out.text(), "hello");
  EXPECT_NE(c.job->r.err.text(), "a long error line") << "capped at the spec's 8 bytes";
  EXPECT_EQ(c.told, (std::vector<std::string>{"1:hello", "2:a long error line"}))
      << "the channel is not the program's output";
  c.job->exited(c.t0 + 4s);
  c.job->record_end();
  EXPECT_DOUBLE_EQ(c.job->r.duration_s, 4.0);
  ASSERT_TRUE(c.job->r.result.has_value()) << "the channel's result, into the result";
  EXPECT_EQ(c.job->r.result->at("outcome"), "ok");
}

TEST(JobCore, AStartThatFailedSaysWhichProgram) {
  Core c;
  c.job->cannot_start("No such file or directory");
  EXPECT_EQ(c.job->r.start_error, "cannot start 'python3': No such file or directory");
  EXPECT_FALSE(c.job->r.started);
}

// One act told once per process and burst: an ask's many thread signals are one act.
TEST(JobCore, ALookSignalIsToldOncePerProcessActAndBurst) {
  Core c;
  const auto at = [&](double s) {
    return c.t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  c.job->note_look_signal(7, "asked one of its threads for its stack", at(5.0));
  c.job->note_look_signal(7, "asked one of its threads for its stack", at(5.5));  // same burst
  c.job->note_look_signal(8, "asked one of its threads for its stack", at(5.5));  // another pid
  c.job->note_look_signal(7, "attached gdb to it", at(5.6));                      // another act
  c.job->note_look_signal(7, "asked one of its threads for its stack", at(7.0));  // a new burst
  const auto& l = c.job->r.look_signals;
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].pid, 7);
  EXPECT_DOUBLE_EQ(l[0].at_s, 5.0);
  EXPECT_EQ(l[1].pid, 8);
  EXPECT_EQ(l[2].what, "attached gdb to it");
  EXPECT_DOUBLE_EQ(l[3].at_s, 7.0);
}

TEST(JobCore, OnlyTheLastLookSignalsAreKept) {
  Core c;
  for (size_t i = 0; i < JobCore::kLookSignalsKept + 10; ++i)
    c.job->note_look_signal(7, "asked one of its threads for its stack",
                            c.t0 + std::chrono::seconds(2 * i));
  const auto& l = c.job->r.look_signals;
  ASSERT_EQ(l.size(), JobCore::kLookSignalsKept);
  EXPECT_DOUBLE_EQ(l.front().at_s, 20.0) << "the first ten went";
}

TEST(DebuggerSlots, AtMostSoManyPerTreeForAtMostSoManyTrees) {
  DebuggerSlots slots(/*trees=*/2, /*per_tree=*/2);
  EXPECT_TRUE(slots.may_start(1));
  slots.running(1);
  EXPECT_TRUE(slots.may_start(1));
  slots.running(1);
  EXPECT_FALSE(slots.may_start(1)) << "two of tree 1 run";
  EXPECT_TRUE(slots.may_start(2));
  slots.running(2);
  EXPECT_FALSE(slots.may_start(3)) << "two trees have debuggers running";
  EXPECT_TRUE(slots.may_start(2));
  EXPECT_GE(DebuggerSlots::per_tree_default(), 2u);
  EXPECT_FALSE(DebuggerSlots(1, 0).may_start(1));
}

}  // namespace
}  // namespace fc::harness
