// The watchdog's rules (harness/supervise/watchdog.h) pinned on hand-built facts: no process is
// started, no clock is waited on, each rule holds or fails in milliseconds. A fake TreeControl
// records what the watchdog asked for.
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/supervise/channel_reader.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/stuck_processes.h"
#include "harness/supervise/watchdog.h"
#include "harness/supervise/watchdog_record.h"

namespace fc::harness {
namespace {

using namespace std::chrono_literals;
using launch::TreeChange;

constexpr std::uint64_t kMs = 1000000;  // ns

class FakeControl : public TreeControl {
 public:
  Watchdog* watchdog = nullptr;
  std::vector<std::string> calls;
  std::optional<StacksRequest> request;
  bool answer_at_once = false;
  bool alive = true;
  Clock::time_point now;

  void look_now() override { calls.push_back("look"); }
  void take_stacks(const StacksRequest& r) override {
    calls.push_back(r.ending ? "stacks for the end" : "stacks of a stall");
    request = r;
    if (answer_at_once) answer("gdb");
  }
  void stop_stacks(const std::string& why) override {
    calls.push_back("stop stacks: " + why);
    answer("proc");
  }
  void describe(TreeFacts& t) override {
    t.processes = 2;
    t.threads = 3;
    t.waiting_in = "futex (3)";
  }
  Sent ask_to_end() override {
    calls.push_back("ask to end");
    return alive ? Sent::kRequest : Sent::kNothing;
  }
  bool kill_all() override {
    calls.push_back("kill");
    return alive;
  }
  void answer(const std::string& method, const std::string& python_note = "") {
    Stacks s;
    s.method = method;
    s.python_note = python_note;
    for (const auto& [pid, attach] : request->processes)
      s.threads.push_back({pid, pid, "", "S", "", "", {}, {}});
    watchdog->stacks_in(s, now);
  }
  bool asked(const std::string& what) const {
    for (const auto& c : calls)
      if (c.rfind(what, 0) == 0) return true;
    return false;
  }
};

// A watchdog over hand-built looks, every 250 ms from t0.
struct Watched {
  LaunchSpec spec;
  ChildResult r;
  FakeControl control;
  ChannelReader channel{Clock::time_point()};
  std::optional<Watchdog> w;
  Clock::time_point t0 = Clock::time_point() + 1000s, t;
  std::vector<StallNote::Event> notes;
  std::vector<StallNote> said;
  std::vector<SleepingThread> sleeping;  // given at every look

  explicit Watched(double timeout_s = 60, double hang_after_s = 0, bool note_stalls = false) {
    spec.timeout_s = timeout_s;
    spec.hang_after_s = hang_after_s;
    spec.note_stalls = note_stalls;
    spec.grace_s = 1.0;
    spec.stacks_budget_s = 5;
    spec.on_stall = [this](StallNote::Event e, const StallNote& n, const Stacks*) {
      notes.push_back(e);
      said.push_back(n);
    };
    channel = ChannelReader(t0);
    r.started = true;
    w.emplace(spec, r, control, t0);
    control.watchdog = &*w;
    t = t0;
    look({}, {});  // the first look: watching begins
  }
  // One look at `t`: what changed, and which processes are asleep or stuck.
  void look(const TreeChange& c, std::map<launch::ProcessId, StuckProcess> stuck,
            std::set<launch::ProcessId> asleep = {}, bool held = false) {
    LookFacts f;
    f.at = t;
    f.change = c;
    f.held = held;
    f.processes = 3;
    f.pids = {1, 2, 3};
    f.asleep = std::move(asleep);
    f.stuck = std::move(stuck);
    f.sleeping = sleeping;
    w->looked(f);
  }
  // Looks every 250 ms for `seconds`, asking the watchdog after each, as the loop does.
  void watch(double seconds, const TreeChange& each,
             const std::map<launch::ProcessId, StuckProcess>& stuck = {},
             const std::set<launch::ProcessId>& asleep = {}) {
    for (int i = 0; i < static_cast<int>(std::lround(seconds / 0.25)); ++i) {
      t += 250ms;
      control.now = t;
      if (w->settled()) {
        w->tick(t, channel);
        continue;
      }
      look(each, stuck, asleep);
      w->tick(t, channel);
    }
  }
  double since_start(Clock::time_point at) const {
    return std::chrono::duration<double>(at - t0).count();
  }
};

TreeChange working() { return {100 * kMs, false, false, 0, false}; }  // 40% of a CPU
TreeChange still() { return {}; }
TreeChange starved() { return {1 * kMs, false, /*wanted_cpu=*/true, 200 * kMs, false}; }

StuckProcess stuck_since(launch::ProcessId pid, Clock::time_point since) {
  StuckProcess s;
  s.pid = pid;
  s.ppid = 1;
  s.name = "worker";
  s.threads = 1;
  s.since = since;
  s.words = {0x1000};
  return s;
}

TEST(Watchdog, AWorkingTreeAtItsDeadlineIsATimeout) {
  Watched run(3);
  run.watch(4, working());
  EXPECT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_FALSE(run.r.tree.blocked);
  EXPECT_FALSE(run.r.stuck);
  EXPECT_TRUE(run.control.asked("ask to end"));
  run.w->exited(run.t);
  run.r.sent_sigterm = true;
  EXPECT_EQ(classify(run.r, false).outcome, Outcome::kTimeout) << classify(run.r, false).message;
}

TEST(Watchdog, NoDeadlineMeansItRunsUntilItEnds) {
  Watched run(0);  // exec and watch by default: a healthy training run is never ended for time
  run.watch(3600, working());
  EXPECT_NE(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_FALSE(run.control.asked("ask to end"));
}

TEST(Watchdog, ABlockedTreeAtItsDeadlineIsAHangAndItsStacksAreBounded) {
  Watched run(3);
  run.watch(3, still());
  ASSERT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_TRUE(run.r.tree.blocked);
  ASSERT_TRUE(run.control.request);
  EXPECT_TRUE(run.control.request->ending);
  EXPECT_LE(run.control.request->budget_s, WatchdogTimes::kStacksAfterCallS);
  for (const auto& [pid, attach] : run.control.request->processes)
    EXPECT_EQ(attach, Attach::kLong) << "the tree is ended anyway: any debugger may attach";
  // The debugger does not answer: its budget ends it, then the polite request, then the kill.
  run.watch(0.75, still());
  EXPECT_FALSE(run.control.asked("stop stacks")) << "within its budget";
  run.watch(0.25, still());
  EXPECT_TRUE(run.control.asked("stop stacks: the stacks budget left once time was called"));
  EXPECT_TRUE(run.control.asked("ask to end"));
  EXPECT_FALSE(run.control.asked("kill"));
  run.watch(WatchdogTimes::kGraceAfterCallS, still());
  EXPECT_TRUE(run.control.asked("kill"));
  EXPECT_TRUE(run.r.sent_sigterm);
  EXPECT_TRUE(run.r.sent_sigkill);
  EXPECT_EQ(classify(run.r, false).outcome, Outcome::kHang);
}

TEST(Watchdog, AStarvedTreeIsSaidOnceAndNeverCalledAHang) {
  Watched run(60, /*hang_after_s=*/2, /*note_stalls=*/true);
  run.watch(10, starved());
  EXPECT_NE(run.r.called_for, TimeCalled::kStall);
  EXPECT_NE(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_FALSE(run.control.asked("ask to end"));
  int starved_notes = 0, stalls = 0;
  for (auto e : run.notes) {
    starved_notes += e == StallNote::Event::kStarved;
    stalls += e == StallNote::Event::kStalled;
  }
  EXPECT_EQ(starved_notes, 1);
  EXPECT_EQ(stalls, 0);
  EXPECT_GE(run.said.front().starved_s, 1.0);
  EXPECT_GE(run.w->activity().starved_for(), 9s);
}

TEST(Watchdog, AStarvedTreeAtItsDeadlineIsATimeoutThatSaysSo) {
  Watched run(3);
  run.watch(3, starved());
  ASSERT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_FALSE(run.r.tree.blocked);
  EXPECT_GT(run.r.tree.starved_s, 2.0);
  run.w->exited(run.t);
  run.r.sent_sigterm = true;
  const auto c = classify(run.r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout);
  EXPECT_NE(c.message.find("starved when its 3.0 s deadline passed"), std::string::npos)
      << c.message;
}

SleepingThread asleep_until(Clock::time_point since, Clock::time_point ends) {
  SleepingThread s;
  s.pid = 7;
  s.tid = 8;
  s.process = "python3";
  s.syscall = 230;
  s.since = since;
  s.ends = ends;
  s.ends_exact = true;
  return s;
}

TEST(Watchdog, AWaitThatEndsByItselfIsNeverAHangAndStillnessCountsFromItsEnd) {
  // time.sleep(8) under --hang-after 2: said once as sleeping, never a stall, never called.
  Watched run(60, /*hang_after_s=*/2, /*note_stalls=*/true);
  run.sleeping = {asleep_until(run.t0, run.t0 + 8s)};
  run.watch(8, still());
  EXPECT_NE(run.r.called_for, TimeCalled::kStall);
  EXPECT_FALSE(run.control.asked("ask to end"));
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run.notes[0], StallNote::Event::kSleeping);
  ASSERT_TRUE(run.said[0].sleep);
  EXPECT_EQ(run.said[0].sleep->tid, 8);
  EXPECT_TRUE(run.said[0].sleep->ends_exact);
  EXPECT_GT(run.said[0].sleep->ends_in_s, 0);
  EXPECT_LE(run.said[0].sleep->ends_in_s, 8);
  // It woke into a wait for ever: still from its last sleeping look on, not from the start. No
  // stall until a whole window of stillness has passed since.
  run.sleeping.clear();
  run.watch(0.5, still());
  EXPECT_EQ(run.notes.size(), 1u) << "no stall half a second after the sleep ended";
  run.watch(1.0, still());
  EXPECT_EQ(run.notes.back(), StallNote::Event::kStalled);
  EXPECT_NE(run.r.called_for, TimeCalled::kStall) << "1.5 s still since the sleep ended";
  run.watch(0.75, still());
  EXPECT_EQ(run.r.called_for, TimeCalled::kStall);
  EXPECT_GE(run.r.tree.still_s, 2.0);
  EXPECT_LT(run.r.tree.still_s, 3.0);
}

TEST(Watchdog, ASleepingTreeAtItsDeadlineIsATimeoutThatSaysWhenItWakes) {
  Watched run(3);
  run.sleeping = {asleep_until(run.t0, run.t0 + 5s)};
  run.watch(3, still());
  ASSERT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_FALSE(run.r.tree.blocked);
  ASSERT_TRUE(run.r.tree.sleep);
  EXPECT_NEAR(run.r.tree.sleep->ends_in_s, 2.0, 0.3);
  run.w->exited(run.t);
  run.r.sent_sigterm = true;
  const auto c = classify(run.r, false);
  EXPECT_EQ(c.outcome, Outcome::kTimeout) << c.message;
  EXPECT_NE(c.message.find("asleep when its 3.0 s deadline passed: pid 7 [python3] thread 8 "
                           "sleeps in "),
            std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find(", a wait that ends by itself in 2."), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("a timeout, not a hang"), std::string::npos) << c.message;
  EXPECT_EQ(watchdog_record(run.r)["tree"]["state"], "sleeping");
}

TEST(Watchdog, AStuckProcessInASleepingTreeIsStillAHang) {
  // A worker deadlocked on a lock copied at fork, its parent polling it every 5 s.
  Watched run(60, /*hang_after_s=*/2);
  run.sleeping = {asleep_until(run.t0, run.t0 + 1000s)};
  run.watch(3, still(), {{9, stuck_since(9, run.t0)}});
  EXPECT_EQ(run.r.called_for, TimeCalled::kStuck);
}

TEST(Watchdog, AStuckProcessBesideAWorkingTreeIsAStallOfItsOwnAndHangAfterEndsIt) {
  Watched run(60, /*hang_after_s=*/3, /*note_stalls=*/true);
  const std::map<launch::ProcessId, StuckProcess> stuck = {{7, stuck_since(7, run.t0 + 500ms)}};
  run.watch(1.25, working(), stuck);
  EXPECT_TRUE(run.notes.empty()) << "stuck for under a stall window";
  run.watch(0.5, working(), stuck);
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run.notes[0], StallNote::Event::kStalled);
  ASSERT_TRUE(run.said[0].process);
  EXPECT_EQ(run.said[0].kind, StallNote::Kind::kProcess);
  EXPECT_EQ(run.said[0].process->pid, 7);
  EXPECT_FALSE(run.said[0].process->rest_still);
  EXPECT_GT(run.said[0].process->rest_cpu_share, 0.3);
  // Its stacks: that process only, and a debugger may stop it as long as it needs (it cannot go
  // on anyway).
  ASSERT_TRUE(run.control.request);
  EXPECT_FALSE(run.control.request->ending);
  ASSERT_EQ(run.control.request->processes.size(), 1u);
  EXPECT_EQ(run.control.request->processes.at(7), Attach::kLong);
  run.control.answer("gdb", "Python frames of 1 of 1 Python process looked at");
  run.watch(2, working(), stuck);
  EXPECT_EQ(run.r.called_for, TimeCalled::kStuck);
  ASSERT_TRUE(run.r.stuck);
  EXPECT_EQ(run.r.stuck->pid, 7);
  EXPECT_GE(run.r.stuck->stuck_s, 3.0);
  EXPECT_LT(run.since_start(run.t0) + run.r.called_after_s, 3.76);
  // Its stacks from the stall are still its own (stuck ever since): only the rest are taken.
  ASSERT_TRUE(run.control.request->ending);
  EXPECT_EQ(run.control.request->processes.count(7), 0u);
  EXPECT_NE(run.r.stacks.note.find("stuck ever since"), std::string::npos) << run.r.stacks.note;
  run.control.answer("eu-stack", "Python frames of 2 of 2 Python processes looked at");
  // Each taking's count, said with when it was taken (not "1 of 1; 2 of 2" of one program).
  EXPECT_EQ(run.r.stacks.python_note,
            "when the stall was first seen: Python frames of 1 of 1 Python process looked at; at "
            "the end: Python frames of 2 of 2 Python processes looked at");
  run.watch(0.25, working(), stuck);
  EXPECT_TRUE(run.control.asked("ask to end"));
  run.w->exited(run.t);
  const auto c = classify(run.r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang);
  EXPECT_NE(c.message.find("pid 7 [worker] can never go on by itself"), std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find("the rest of the tree kept working"), std::string::npos) << c.message;
}

TEST(Watchdog, ADeadlinePassingOverAStuckProcessIsAPartialDeadlockNotATimeout) {
  Watched run(4);
  run.watch(4, working(), {{7, stuck_since(7, run.t0 + 1s)}});
  ASSERT_EQ(run.r.called_for, TimeCalled::kDeadline);
  ASSERT_TRUE(run.r.stuck);
  run.w->exited(run.t);
  run.r.sent_sigterm = true;
  const auto c = classify(run.r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang);
  EXPECT_NE(c.message.find("a partial deadlock"), std::string::npos) << c.message;
}

TEST(Watchdog, ADeadlineShorterThanTheStallWindowStillTellsADeadlockByItsProof) {
  Watched run(0.5);
  run.watch(0.5, still(), {{7, stuck_since(7, run.t0 + 250ms)}});
  ASSERT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_TRUE(run.r.stuck) << "two looks prove it";
}

TEST(Watchdog, AnAsleepProcessIsNoStallAndAStallsStacksStopOnlyWhatSleeps) {
  Watched run(60, 0, /*note_stalls=*/true);
  run.watch(3, working(), {}, {2});  // pid 2 idles (a pool worker waiting for work)
  EXPECT_TRUE(run.notes.empty());
  run.watch(1.25, still(), {{3, stuck_since(3, run.t)}}, {2});
  ASSERT_FALSE(run.notes.empty());
  EXPECT_EQ(run.notes[0], StallNote::Event::kStalled);
  EXPECT_EQ(run.said[0].kind, StallNote::Kind::kTree);
  ASSERT_TRUE(run.control.request);
  EXPECT_EQ(run.control.request->processes.at(1), Attach::kNone) << "not known to be asleep";
  EXPECT_EQ(run.control.request->processes.at(2), Attach::kBrief) << "asleep: a brief attach";
  EXPECT_EQ(run.control.request->processes.at(3), Attach::kLong) << "stuck: any debugger";
}

TEST(Watchdog, AStallsStacksTakenWhileTheTreeStayedStillAreTheHangs) {
  Watched run(60, /*hang_after_s=*/2, /*note_stalls=*/true);
  run.control.answer_at_once = true;
  run.watch(3.5, still());
  ASSERT_EQ(run.r.called_for, TimeCalled::kStall);
  EXPECT_EQ(run.r.stacks.method, "gdb");
  EXPECT_NE(run.r.stacks.note.find("the tree still ever since"), std::string::npos)
      << run.r.stacks.note;
  int takings = 0;
  for (const auto& c : run.control.calls) takings += c.rfind("stacks", 0) == 0;
  EXPECT_EQ(takings, 1) << "taken once, at the stall";
}

TEST(Watchdog, AnInterruptTakesNoStacksAndEndsWithAShortGrace) {
  Watched run(60);
  run.watch(1, working());
  run.w->interrupted(2, run.t);
  run.watch(0.25, working());
  EXPECT_FALSE(run.control.request);
  EXPECT_TRUE(run.control.asked("ask to end"));
  EXPECT_EQ(run.r.interrupted_by, 2);
  run.watch(WatchdogTimes::kGraceOnInterruptS, working());
  EXPECT_TRUE(run.control.asked("kill"));
}

TEST(Watchdog, AnInterruptDuringTheGraceShortensIt) {
  Watched run(2);
  run.watch(2, working());  // the deadline: a timeout, stacks, then the polite request
  run.control.answer("eu-stack");
  run.watch(0.25, working());
  ASSERT_TRUE(run.control.asked("ask to end"));
  EXPECT_FALSE(run.control.asked("kill"));
  run.w->interrupted(2, run.t);
  run.watch(WatchdogTimes::kGraceOnInterruptS, working());
  EXPECT_TRUE(run.control.asked("kill")) << "Ctrl-C: the rest of the grace is cut to half a second";
}

TEST(Watchdog, AnInterruptWhileAHangsStacksAreTakenKeepsTheHang) {
  Watched run(2);
  run.watch(2, still());
  ASSERT_TRUE(run.control.request);
  run.w->interrupted(2, run.t);
  run.watch(0.25, still());
  EXPECT_TRUE(run.control.asked("stop stacks: forkcheck was interrupted"));
  run.w->exited(run.t);
  EXPECT_TRUE(time_was_called(run.r));
  EXPECT_EQ(classify(run.r, false).outcome, Outcome::kHang);
}

// Time is called for failures at start when they are recorded: an interrupt (or the child's own
// exit) before the next round does not make them an interrupted run.
TEST(Watchdog, FailuresAtStartAreWhatTimeWasCalledForEvenIfAnInterruptComesFirst) {
  Watched run(60);
  run.spec.end_after_start_failures = 3;
  run.watch(0.5, working());
  run.w->failed_at_start(3);
  EXPECT_EQ(run.r.called_for, TimeCalled::kStartFailures);
  run.w->interrupted(2, run.t);
  run.watch(0.25, working());
  EXPECT_TRUE(run.control.asked("ask to end"));
  run.w->exited(run.t);
  EXPECT_TRUE(time_was_called(run.r));
  const auto c = classify(run.r, false);
  EXPECT_EQ(c.outcome, Outcome::kError) << c.message;
  EXPECT_NE(c.message.find("3 of its processes failed at start"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("no `if __name__ == \"__main__\":` guard"), std::string::npos)
      << c.message;
}

// Fewer failures than LaunchSpec::end_after_start_failures, or none asked for (0): the run goes
// on (a program may retry a worker that failed once).
TEST(Watchdog, FailuresAtStartCallTimeOnlyOnceAsManyAsTheSpecSaysHaveFailed) {
  Watched run(60);
  run.spec.end_after_start_failures = 3;
  run.watch(0.5, working());
  run.w->failed_at_start(2);
  run.watch(0.5, working());
  EXPECT_EQ(run.r.called_for, TimeCalled::kNo);
  EXPECT_TRUE(run.r.failing_at_start.empty());
  run.w->failed_at_start(4);
  EXPECT_EQ(run.r.called_for, TimeCalled::kStartFailures);
  EXPECT_NE(run.r.failing_at_start.find("4 of its processes"), std::string::npos);

  Watched unasked(60);
  unasked.watch(0.5, working());
  unasked.w->failed_at_start(50);
  unasked.watch(0.5, working());
  EXPECT_EQ(unasked.r.called_for, TimeCalled::kNo);
}

TEST(Watchdog, APauseDoesNotCountAgainstTheDeadline) {
  Watched run(3);
  run.watch(2, working());
  const auto from = run.t;
  run.t += 60s;
  run.w->paused(from, run.t, run.channel);
  run.watch(0.75, working());
  EXPECT_NE(run.r.called_for, TimeCalled::kDeadline) << "2.75 s of running time";
  run.watch(0.5, working());
  EXPECT_EQ(run.r.called_for, TimeCalled::kDeadline);
  EXPECT_DOUBLE_EQ(run.r.paused_s, 60.0);
}

TEST(Watchdog, APauseIsNoStall) {
  Watched run(600, /*hang_after_s=*/2);
  run.watch(1.5, still());
  run.w->paused(run.t, run.t + 30s, run.channel);
  run.t += 30s;
  run.watch(1.5, still());
  EXPECT_NE(run.r.called_for, TimeCalled::kStall) << "1.5 s still, then 1.5 s: no 2 s stretch";
  run.watch(1, still());
  EXPECT_EQ(run.r.called_for, TimeCalled::kStall);
}

TEST(Watchdog, LooksUnderOurDebuggerAreJudgedOnCpuAndEventsAlone) {
  Watched run(600, /*hang_after_s=*/3);
  run.watch(1.5, still());
  for (int i = 0; i < 4; ++i) {  // a debugger holds it: runnable and traced states are ours
    run.t += 250ms;
    run.look({0, false, /*wanted_cpu=*/true, 0, /*stopped=*/true}, {}, {}, /*held=*/true);
    run.w->tick(run.t, run.channel);
  }
  run.watch(0.5, still());
  EXPECT_EQ(run.r.called_for, TimeCalled::kStall) << "3 s still, one of them under our debugger";
}

TEST(Watchdog, AnOverdueStepBesideAStuckProcessIsAHangWhileTheTreeWorks) {
  Watched run(60);
  // The step's process must be alive (a step of a process gone is dropped): this one.
  const std::string line = "{\"ev\":\"step\",\"pid\":" + std::to_string(::getpid()) +
                           ",\"step\":\"join\",\"within_s\":0.5}\n";
  run.channel.feed(line.data(), line.size(), run.t0);
  run.watch(1.0, working());
  EXPECT_FALSE(run.r.step_hang) << "overdue, but the tree works and nothing is stuck";
  run.watch(1.5, working(), {{7, stuck_since(7, run.t)}});
  EXPECT_TRUE(run.r.step_hang);
  EXPECT_TRUE(run.r.stuck);
}

ChildResult called(bool blocked) {
  ChildResult r;
  r.started = true;
  r.timeout_s = 5;
  r.called_for = TimeCalled::kDeadline;
  r.called_after_s = 5;
  r.sent_sigterm = true;
  r.tree.blocked = blocked;
  r.tree.still_s = blocked ? 4 : 0;
  r.tree.window_s = 1;
  r.tree.processes = 2;
  r.tree.threads = 2;
  return r;
}

// ---- StuckProcesses: which processes can never go on ------------------------------------

launch::TreeLook tree_at(Clock::time_point at,
                         const std::map<int, std::vector<launch::ThreadFacts>>& processes) {
  launch::TreeLook l;
  l.at = at;
  for (auto& [pid, threads] : processes) {
    launch::TreeLook::Process p;
    p.facts.pid = pid;
    p.facts.start_time = 100;
    p.facts.state = 'S';
    p.facts.name = "p" + std::to_string(pid);
    for (size_t i = 0; i < threads.size(); ++i)
      p.threads[pid * 100 + static_cast<int>(i)] = threads[i];
    l.processes.emplace(pid, std::move(p));
  }
  return l;
}

launch::ThreadFacts thread(char state, std::uint64_t cpu) {
  launch::ThreadFacts t;
  t.state = state;
  t.cpu_ns = cpu;
  return t;
}

struct Waits {
  std::map<int, launch::ThreadWait> by_tid;
  StuckProcesses::WaitReader reader() {
    return [this](launch::ProcessId, int tid) -> std::optional<launch::ThreadWait> {
      auto it = by_tid.find(tid);
      if (it == by_tid.end()) return std::nullopt;
      return it->second;
    };
  }
};

launch::ThreadWait futex(bool untimed_private, std::uint64_t word = 0x10) {
  launch::ThreadWait w;
  w.syscall = 202;
  w.untimed_private_futex = untimed_private;
  w.futex_word = untimed_private ? word : 0;
  return w;
}

TEST(StuckProcesses, OneThreadOnAnUntimedPrivateFutexWithNoCpuIsStuckSinceThePreviousLook) {
  Waits waits;
  waits.by_tid[700] = futex(true);
  StuckProcesses s(waits.reader());
  const auto t = Clock::time_point() + 10s;
  s.look(tree_at(t, {{7, {thread('S', 5)}}}), tree_at(t + 250ms, {{7, {thread('S', 5)}}}));
  ASSERT_EQ(s.stuck().count(7), 1u);
  EXPECT_EQ(s.stuck().at(7).since, t);
  EXPECT_EQ(s.stuck().at(7).name, "p7");
  s.look(tree_at(t + 250ms, {{7, {thread('S', 5)}}}), tree_at(t + 500ms, {{7, {thread('S', 5)}}}));
  EXPECT_EQ(s.stuck().at(7).since, t) << "stuck since the first time, as long as it waits there";
}

TEST(StuckProcesses, WhatSomethingElseMayStillWakeIsNotStuck) {
  const auto t = Clock::time_point() + 10s;
  const auto before = tree_at(t, {{7, {thread('S', 5)}}});
  const auto after = tree_at(t + 250ms, {{7, {thread('S', 5)}}});
  for (const auto& [what, wait] :
       std::vector<std::pair<std::string, std::optional<launch::ThreadWait>>>{
           {"a timed or shared futex", futex(false)},
           {"a pipe, a socket, a sleep", launch::ThreadWait{0, false, 0}},
           {"no system call shown", std::nullopt}}) {
    Waits waits;
    if (wait) waits.by_tid[700] = *wait;
    StuckProcesses s(waits.reader());
    s.look(before, after);
    EXPECT_TRUE(s.stuck().empty()) << what;
  }
}

TEST(StuckProcesses, AThreadThatRanOrRunsIsNotStuck) {
  Waits waits;
  waits.by_tid[700] = futex(true);
  waits.by_tid[701] = futex(true, 0x20);
  StuckProcesses s(waits.reader());
  const auto t = Clock::time_point() + 10s;
  s.look(tree_at(t, {{7, {thread('S', 5), thread('S', 9)}}}),
         tree_at(t + 250ms, {{7, {thread('S', 5), thread('S', 10)}}}));
  EXPECT_TRUE(s.stuck().empty()) << "one nanosecond of CPU: it ran";
  s.look(tree_at(t, {{7, {thread('S', 5), thread('R', 9)}}}),
         tree_at(t + 250ms, {{7, {thread('S', 5), thread('R', 9)}}}));
  EXPECT_TRUE(s.stuck().empty()) << "runnable";
  s.look(tree_at(t, {{7, {thread('S', 5), thread('S', 9)}}}),
         tree_at(t + 250ms, {{7, {thread('S', 5), thread('S', 9)}}}));
  EXPECT_EQ(s.stuck().count(7), 1u) << "every thread of it waits: a deadlock inside it";
}

TEST(StuckProcesses, APauseWithNoHandlerIsStuckAndTheTextSaysSo) {
  Waits waits;
  launch::ThreadWait pause;
  pause.syscall = 34;
  pause.pause_without_handler = true;
  waits.by_tid[700] = pause;
  StuckProcesses s(waits.reader());
  const auto t = Clock::time_point() + 10s;
  s.look(tree_at(t, {{7, {thread('S', 5)}}}), tree_at(t + 250ms, {{7, {thread('S', 5)}}}));
  ASSERT_EQ(s.stuck().count(7), 1u);
  EXPECT_TRUE(s.stuck().at(7).pause);
  ChildResult r = called(false);
  r.stuck = ProcessStall{7, 1, "worker", 1, /*pause=*/true, 1.0, 2.0, 0.5, false};
  const auto c = classify(r, false);
  EXPECT_EQ(c.outcome, Outcome::kHang);
  EXPECT_NE(c.message.find("waited in pause() for 2.0 s, and it catches no signal"),
            std::string::npos)
      << c.message;
}

TEST(StuckProcesses, AnotherWaitStartsAnew) {
  Waits waits;
  waits.by_tid[700] = futex(true, 0x10);
  StuckProcesses s(waits.reader());
  const auto t = Clock::time_point() + 10s;
  s.look(tree_at(t, {{7, {thread('S', 5)}}}), tree_at(t + 250ms, {{7, {thread('S', 5)}}}));
  waits.by_tid[700] = futex(true, 0x20);
  s.look(tree_at(t + 250ms, {{7, {thread('S', 5)}}}), tree_at(t + 500ms, {{7, {thread('S', 5)}}}));
  EXPECT_EQ(s.stuck().at(7).since, t + 250ms);
}

TEST(StuckProcesses, OurDebuggersVisitLeavesItStuckSinceBefore) {
  Waits waits;
  waits.by_tid[700] = futex(true);
  StuckProcesses s(waits.reader());
  const auto t = Clock::time_point() + 10s;
  s.look(tree_at(t, {{7, {thread('S', 5)}}}), tree_at(t + 250ms, {{7, {thread('S', 5)}}}));
  s.look(tree_at(t + 250ms, {{7, {thread('S', 5)}}}), tree_at(t + 500ms, {{7, {thread('t', 6)}}}),
         /*held=*/true);
  EXPECT_EQ(s.stuck().count(7), 1u);
  // Woken into the debugger's stop, it used a little CPU; back in the same wait, it is stuck as
  // it was.
  s.look(tree_at(t + 500ms, {{7, {thread('t', 6)}}}), tree_at(t + 750ms, {{7, {thread('S', 7)}}}));
  ASSERT_EQ(s.stuck().count(7), 1u);
  EXPECT_EQ(s.stuck().at(7).since, t);
}

// ---- classify: what the facts come to ----------------------------------------------------

TEST(Classify, TheTreeAtTheCallIsTheOutcome) {
  struct Row {
    const char* what;
    ChildResult r;
    Outcome outcome;
    const char* says;
  };
  ChildResult stuck = called(false);
  stuck.stuck = ProcessStall{7, 1, "python3", 1, /*pause=*/false, 1.0, 4.0, 0.9, false};
  ChildResult starved = called(false);
  starved.tree.starved_s = 3.5;
  starved.tree.starved = true;
  ChildResult barely = called(false);
  barely.tree.starved_s = 0.7;  // under a stall window: still working
  ChildResult hang_after = called(true);
  hang_after.called_for = TimeCalled::kStall;
  hang_after.hang_after_s = 3;
  ChildResult stuck_too_long = stuck;
  stuck_too_long.called_for = TimeCalled::kStuck;
  stuck_too_long.hang_after_s = 3;
  ChildResult by_itself = called(true);
  by_itself.sent_sigterm = false;
  by_itself.exit.code = 0;
  const std::vector<Row> rows = {
      {"blocked at the deadline", called(true), Outcome::kHang,
       "blocked when its 5.0 s deadline passed"},
      {"working at the deadline", called(false), Outcome::kTimeout,
       "still working when its 5.0 s deadline passed"},
      {"starved at the deadline", starved, Outcome::kTimeout,
       "runnable but waiting for a CPU for 3.5 s"},
      {"waiting a moment for a CPU", barely, Outcome::kTimeout, "still working when"},
      {"one process stuck at the deadline", stuck, Outcome::kHang, "a partial deadlock"},
      {"still for --hang-after", hang_after, Outcome::kHang, "past the 3.0 s a stall may last"},
      {"stuck for --hang-after", stuck_too_long, Outcome::kHang,
       "pid 7 [python3] can never go on by itself"},
      {"ended by itself once time was called", by_itself, Outcome::kOk,
       "before forkcheck signalled it"},
  };
  for (const auto& row : rows) {
    const auto c = classify(row.r, false);
    EXPECT_EQ(c.outcome, row.outcome) << row.what << ": " << c.message;
    EXPECT_NE(c.message.find(row.says), std::string::npos) << row.what << ": " << c.message;
  }
}

}  // namespace
}  // namespace fc::harness

namespace fc::harness {
namespace {

// A death by a signal soon after forkcheck looked at the child is weighed against the first look
// of that window (what began it: the stack request, not the debugger that came after it), and
// never against a look long before, nor when forkcheck itself ended the child.
TEST(DiedAfterLook, TheFirstLookOfTheWindowIsNamedAndOnlyThen) {
  ChildResult r;
  r.started = true;
  r.pid = 7;
  r.exit.ended = true;
  r.exit.signal = SIGSEGV;
  r.duration_s = 5.1;
  r.look_signals = {{7, "asked its main thread for every thread's stack", 5.0},
                    {7, "attached eu-stack to it", 5.09},
                    {8, "asked one of its threads for its stack", 5.05}};
  auto died = died_after_look(r);
  ASSERT_TRUE(died);
  EXPECT_EQ((*died)["what"], "asked its main thread for every thread's stack");
  EXPECT_NEAR((*died)["after_s"].get<double>(), 0.1, 1e-9);
  EXPECT_EQ(classify(r, false).outcome, Outcome::kError);
  EXPECT_TRUE(classify(r, false).harness_error);

  r.look_signals = {{7, "asked its main thread for every thread's stack", 2.0}};
  EXPECT_FALSE(died_after_look(r)) << "3.1 s later: its own crash";
  EXPECT_EQ(classify(r, false).outcome, Outcome::kCrash);

  r.look_signals = {{7, "asked its main thread for every thread's stack", 5.0}};
  r.sent_sigterm = true;
  EXPECT_FALSE(died_after_look(r)) << "forkcheck ended it";
}

}  // namespace
// forkcheck attach ends a process it did not start only for a proven hang, and only when asked to.
TEST(Watchdog, AnAttachedTreeIsEndedOnlyForAProvenHangAndOnlyWhenAsked) {
  LaunchSpec spec;
  ChildResult r;
  for (TimeCalled why : {TimeCalled::kStall, TimeCalled::kStuck, TimeCalled::kStep}) {
    r.called_for = why;
    spec.end_attached = false;
    EXPECT_FALSE(ends_attached_tree(spec, r)) << "not asked: " << static_cast<int>(why);
    spec.end_attached = true;
    EXPECT_TRUE(ends_attached_tree(spec, r)) << static_cast<int>(why);
  }
  for (TimeCalled why : {TimeCalled::kNo, TimeCalled::kDeadline, TimeCalled::kStartFailures}) {
    r.called_for = why;
    EXPECT_FALSE(ends_attached_tree(spec, r)) << "not a proven hang: " << static_cast<int>(why);
  }
}

}  // namespace fc::harness
