// The watchdog's policy, written once for every platform: when time is called on a supervised
// tree and why, what is said while the program is left running, how its stacks are taken without
// freezing it, and how it is ended within the time the deadline promises. The mechanism
// (supervisor_posix.cc, supervisor_win32.cc) starts the child, reads its pipes, looks at its
// tree, signals and reaps; it tells the Watchdog what it saw and does what the Watchdog asks
// through TreeControl.
//
// WHY WAS THIS A HANG? The tree is looked at every kLookEvery. Two kinds of evidence:
//   - The whole tree BLOCKED (launch/tree_activity.h, the one rule the repro programs' pools use
//     too): through the last kStallWindow (1 s) it used under kIdleShare (1%) of one CPU, no
//     process or thread came or went, it wrote nothing, and no thread of it wanted a CPU. A
//     thread that is runnable, or that waited on the run queue, is STARVED, not blocked: a loaded
//     machine is said as such ("runnable but waiting for a CPU for 8.1 s") and never makes a hang.
//   - One process STUCK (stuck_processes.h): every thread of it waits on a futex private to it
//     with no timeout, and none ran since the previous look: it can never go on by itself, whatever
//     the rest of the tree does (a lock copied locked at fork, a libgomp barrier of a dead team).
//     A process waiting on a pipe or a timed wait is not stuck: an idle worker is not a stall.
//   Neither is a tree SLEEPING (sleeping_threads.h): quiet, with a thread asleep in a wait that
//   ends by itself (time.sleep, a wait with a timeout of a stall window or more). A wait that
//   will end by itself is not a hang: --hang-after and the stall note wait for it to end, a
//   deadline that passes meanwhile is a `timeout`, and stillness counts from the last look that
//   found such a sleep. A poller that wakes every 100 ms keeps no tree from being still.
// Time is called, and the outcome is `hang`, when (a) an announced step is overdue and the tree
// has been blocked through a whole window or a process has been stuck that long, (b) the tree has
// been blocked, or a process stuck, for LaunchSpec::hang_after_s, or (c) the deadline passes while
// the tree is blocked or a process is stuck (two looks suffice: what is proven needs no window,
// and a deadline shorter than the window must still tell a deadlock from work). A deadline that
// passes otherwise is a `timeout` (still working, or starved: the report says which).
//
// LOOKING NEVER HARMS. A Python process is asked for its stacks only in ways that cannot crash it
// (python_stacks_ask.h), and a death just after forkcheck signalled a process to look at it is
// never said to be the program's own (watchdog_record.h: died_after_look).
//
// LOOKING NEVER FREEZES. While the program is left running (a stall said live), a process is
// attached to only when it is asleep (Attach::kBrief: eu-stack, a fraction of a second), and
// a debugger that stops it for long (gdb reading Python frames) only when it is stuck (it cannot
// go on anyway) or time was called; every debugger has a budget, and one that overruns it is
// killed and its process released (continued if it was left stopped). Intervals in which our
// debugger held a process are judged on CPU and events alone, and what /proc says of a held
// process (ptrace_stop) is never reported as where it waits.
//
// THE DEADLINE IS A PROMISE. Once the deadline passes, the run ends within kEndWithinS: stacks
// get at most kStacksAfterCallS (those taken of a stall, if the tree stayed still since, are used
// as they are), the polite request (SIGTERM, Ctrl-Break) at most kGraceAfterCallS, then every
// process is frozen and killed. Time called earlier (a stall, a step) gives the stacks the spec's
// budget, never past the deadline's own promise. An interrupt (Ctrl-C) skips the
// stacks and gives kGraceOnInterruptS. A pause of forkcheck and the tree together (Ctrl-Z) does
// not count against the deadline.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/stacks/stacks.h"
#include "harness/supervise/channel_reader.h"
#include "harness/supervise/sleeping_threads.h"
#include "harness/supervise/stuck_processes.h"
#include "harness/supervise/supervisor.h"
#include "launch/process_tree.h"
#include "launch/tree_activity.h"

namespace fc::harness {

struct WatchdogTimes {
  static constexpr double kEndWithinS = 3.0;        // time called -> the run ended, reports written
  static constexpr double kStacksAfterCallS = 0.8;  // stacks taken once time was called, at most
  static constexpr double kGraceAfterCallS = 1.0;   // polite request -> kill, at most
  static constexpr double kGraceOnInterruptS = 0.5;  // the same after Ctrl-C
  static constexpr double kLiveStacksS = 10.0;       // stacks of a stall, the program running on
  static constexpr double kBriefAttachS = 1.5;       // one brief attach (eu-stack), at most
};
// The promise holds by construction: stacks, grace, then freezing, killing and the reports (half
// a second).
static_assert(WatchdogTimes::kStacksAfterCallS + WatchdogTimes::kGraceAfterCallS + 0.5 <=
                  WatchdogTimes::kEndWithinS,
              "the deadline's promise: stacks, grace, then the end and the reports");

// What the mechanism does for the watchdog.
class TreeControl {
 public:
  virtual ~TreeControl() = default;
  // A fresh look at the tree now (Watchdog::looked is called with it).
  virtual void look_now() = 0;
  // Starts taking stacks beside the watching; Watchdog::stacks_in gets them. One at a time.
  virtual void take_stacks(const StacksRequest& request) = 0;
  // Ends a taking at once (calls Watchdog::stacks_in before it returns): debuggers still
  // running are killed and their processes released; what they did not say, /proc says, with
  // `why`.
  virtual void stop_stacks(const std::string& why) = 0;
  // Processes, threads and what the threads wait in, as of now (read before any debugger of
  // ours attached, while one is attached).
  virtual void describe(TreeFacts& facts) = 0;
  // Who waits on whom in the tree now (wait_graph.h), read before a debugger of ours attaches
  // for the end. Not read by default (a test's tree).
  virtual WaitGraphFacts wait_graph() { return {}; }
  // The polite request (SIGTERM and SIGCONT; Ctrl-Break), then the end of every process of the
  // tree (frozen, then killed). What the child itself got: nothing (it had ended already), the
  // request, or the end (Windows, with no console to send the request on, ends it at once).
  enum class Sent { kNothing, kRequest, kKill };
  virtual Sent ask_to_end() = 0;
  virtual bool kill_all() = 0;  // whether the child itself, still alive, was killed
};

// What the mechanism saw at one look.
struct LookFacts {
  Clock::time_point at;
  launch::TreeChange change;  // since the previous look; orphans reaped meanwhile included
  bool held = false;          // a debugger of ours held a process of the tree stopped meanwhile
  std::size_t processes = 0;  // alive
  std::vector<launch::ProcessId> pids;  // the alive ones
  std::set<launch::ProcessId> asleep;   // every thread asleep, no CPU since the last look
  std::map<launch::ProcessId, StuckProcess> stuck;
  std::vector<SleepingThread> sleeping;  // in a wait that ends by itself, first to wake first
};

class Watchdog {
 public:
  Watchdog(const LaunchSpec& spec, ChildResult& result, TreeControl& control,
           Clock::time_point start);

  // Facts, as they come.
  void looked(const LookFacts& facts);
  void output(Clock::time_point at) { activity_.output(at); }
  void exited(Clock::time_point at);
  void stacks_in(Stacks stacks, Clock::time_point at);
  // Forkcheck and the tree were stopped together (Ctrl-Z) from `from` to `to`.
  void paused(Clock::time_point from, Clock::time_point to, ChannelReader& channel);
  // Forkcheck was interrupted (Ctrl-C, SIGTERM, SIGHUP).
  void interrupted(int signal, Clock::time_point now);
  // So many of its processes have failed at start, each with CPython's bootstrapping RuntimeError
  // (kStartFailure). Once LaunchSpec::end_after_start_failures have, time is called at the next
  // tick, r.failing_at_start saying why; no stacks are taken (the error is the cause).
  void failed_at_start(std::size_t processes);

  // Acts on what is due at `now`; returns when it next needs to be asked.
  Clock::time_point tick(Clock::time_point now, ChannelReader& channel);

  bool look_due(Clock::time_point now) const;
  // Whether it needs a CPU slot now (Supervisor::run's --jobs): not while parked in a step with
  // its tree quiet, nor while it is being ended.
  bool needs_cpu(const ChannelReader& channel) const;
  // Time was called, or the child ended: looks no longer feed the verdict.
  bool settled() const { return phase_ != Phase::kWatching || exited_; }
  // The end of the run: what the watching measured, into the result.
  void finish(Clock::time_point ended_at);

  const launch::TreeActivity& activity() const { return activity_; }

 private:
  enum class Phase { kWatching, kStacks, kEnding, kKilled };

  void watch(Clock::time_point now, ChannelReader& channel);
  // Time is called (why: the flags already set in the result): the stacks for the end, then end().
  void call(Clock::time_point now);
  void end(Clock::time_point now, double grace_s);
  void take_live_stacks(const std::map<launch::ProcessId, Attach>& which, Clock::time_point now);
  TreeFacts tree_facts();
  ProcessStall process_stall(const StuckProcess& s, Clock::time_point now) const;
  // The process stuck longest, if one has been for `at_least` (a stall window by default).
  std::optional<StuckProcess> longest_stuck(
      Clock::time_point now, Clock::duration at_least = launch::TreeActivity::kStallWindow) const;
  double since_start(Clock::time_point t) const;
  // Still: blocked (TreeActivity), and no thread asleep in a wait that ends by itself; for how
  // long (since the last look that found one so, if that was later than the stillness began).
  bool sleeping() const { return !last_.sleeping.empty(); }
  bool still() const { return activity_.blocked() && !sleeping(); }
  Clock::duration still_for() const;
  std::optional<TreeSleep> tree_sleep() const;
  StallNote tree_note(Clock::time_point now);

  const LaunchSpec& spec_;
  ChildResult& r_;
  TreeControl& control_;
  Clock::time_point start_, deadline_;
  launch::TreeActivity activity_;
  LookFacts last_;
  double last_cpu_share_ = 0;
  Phase phase_ = Phase::kWatching;
  bool exited_ = false;
  int interrupted_ = 0;
  Clock::time_point interrupted_at_;
  Clock::time_point term_at_;
  double grace_s_ = 0;
  // Stacks being taken: for a stall (the tree left running) or for the end; until when.
  bool taking_ = false, taking_for_end_ = false;
  Clock::time_point stacks_until_;
  // Stacks already in, by process, and when they were taken: still the process's if the tree
  // (or the process, stuck) has been still ever since.
  Stacks stall_taken_;
  Clock::time_point stall_taken_at_;
  std::set<launch::ProcessId> stall_taken_pids_;
  // What was said live.
  bool tree_stalled_ = false;
  std::set<launch::ProcessId> stuck_said_;
  bool starved_said_ = false;
  bool sleep_said_ = false;
  std::optional<Clock::time_point> slept_at_;  // the last look with a thread asleep so
};

// forkcheck attach: a process forkcheck did not start is ended only when the spec asks for it
// (LaunchSpec::end_attached, --kill-on-hang) and its hang is proven (a stall, a stuck process, a
// step past its limit); a deadline or an interrupt ends the watch, not the process.
bool ends_attached_tree(const LaunchSpec& spec, const ChildResult& r);

// Whether another job may start: `busy` running jobs hold a slot each (parked and ending ones
// do not), and no more than twice `jobs` run at once in all.
inline bool may_start(size_t busy, size_t running, size_t jobs) {
  return busy < jobs && running < 2 * jobs;
}

}  // namespace fc::harness
