// Whether a process tree is working or blocked: the one rule behind `hang` and `timeout`, used by
// the harness's supervisor and step watch and by the repro programs' pools alike.
//
// The tree is looked at every kLookEvery (launch/process_tree.h: every thread of every process,
// found through child links). It is BLOCKED when, through the last kStallWindow, all its
// processes and threads together used less than kIdleShare of one CPU, none came or went, it
// wrote no output, and none of its threads wanted a CPU: a thread that is runnable at a look, or
// whose run-queue wait grew by a quarter of an interval, is not blocked; the tree is STARVED while
// it wants a CPU and gets under kStarvedShare of one (a loaded machine: it would work if it could
// get a CPU; a SCHED_IDLE program behind busy loops gets a percent or two), and
// a process stopped by a signal or a tracer is not blocked either. Otherwise it is WORKING. A
// tree watched for less than the window is judged on the time it was watched. An interval in
// which forkcheck itself held a process of the tree stopped (a debugger taking its stacks; they
// are only taken of blocked processes) is judged on its CPU and events alone.
//
// Why these numbers (measured on the 2-vCPU development machine, 2026-11-23; README "Hang or
// timeout"): hung trees used 0 ms of CPU per second (a mutex deadlock, Python's multiprocessing
// Pool in libgomp's fork hang), 1.2 ms/s (a DataLoader deadlocked on a lock held at fork, with a
// flusher thread and DataLoader's 5 s status checks), 5.5 ms/s (a pool that polled its workers
// every 10 ms); working ones used 100 ms/s and more, and went at most 0.45 s under 1% of a CPU
// (a graceful shutdown's grace period). 1% of one CPU lies between the two by a factor of 2 or
// more on either side; a window of 1 s is twice the longest quiet stretch of a working tree, and
// shorter than the 1.5 s a case's step is allowed, so a stuck step is still called at its
// allowance.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "launch/process_tree.h"

namespace fc::launch {

class TreeActivity {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kStallWindow{1000};
  static constexpr std::chrono::milliseconds kLookEvery{250};
  static constexpr double kIdleShare = 0.01;     // of one CPU
  static constexpr double kStarvedShare = 0.50;  // of one CPU: wanted one, and got less than this

  // The first look: when watching began.
  void start(Clock::time_point at);
  // A later look: what changed since the previous one (launch::compare_looks). `held`: forkcheck
  // held a process of the tree stopped meanwhile (its states say nothing of the program then).
  void look(Clock::time_point at, const TreeChange& change, bool held = false);
  // The same, from the CPU used and whether a process or thread came or went alone.
  void look(Clock::time_point at, std::uint64_t cpu_ns, bool membership_changed) {
    TreeChange c;
    c.cpu_ns = cpu_ns;
    c.membership_changed = membership_changed;
    look(at, c);
  }
  // Forkcheck and the tree were both stopped (Ctrl-Z) until `at`: what was measured before says
  // nothing of what the tree does now, and the time it was stopped is not time it was still.
  void restart(Clock::time_point at);
  // The tree wrote output (stdout, stderr, its channel) at `at`: it is doing something.
  void output(Clock::time_point at);

  bool started() const { return started_; }
  bool look_due(Clock::time_point now) const { return !started_ || now >= last_ + kLookEvery; }
  Clock::time_point next_look() const { return last_ + kLookEvery; }
  Clock::time_point last_look() const { return last_; }

  // Whether the tree was quiet through the last `span` before the last look (or the later half of
  // the time watched, when that is shorter): under kIdleShare of one CPU, nobody came or went, no
  // output.
  // `whole`: the span itself must have been watched, the later-half rule does not apply.
  bool quiet_over(Clock::duration span, bool whole = false) const;
  // Blocked: quiet through the stall window, as of the last look (a short watch: its later half).
  bool blocked() const { return quiet_over(kStallWindow); }
  // Quiet through a whole stall window, however long it was watched: what a stalled step needs
  // (a step may be overdue long before a deadline, and the tree be still for less than a window).
  bool blocked_through_window() const { return quiet_over(kStallWindow, /*whole=*/true); }
  // How long the tree had been blocked as of the last look (zero when it is working).
  Clock::duration still_for() const;
  Clock::duration longest_still() const { return longest_still_; }
  // How long it has wanted a CPU without getting kStarvedShare of one, as of the last look (zero
  // when it is not starved), the longest such stretch, and the run-queue wait of all its threads
  // so far (Linux; 0 where the OS does not tell).
  Clock::duration starved_for() const;
  Clock::duration longest_starved() const { return longest_starved_; }
  std::uint64_t run_delay_total_ns() const { return run_delay_total_; }
  // Whether a process of it was stopped (by a signal or a tracer not ours) at the last look.
  bool stopped() const { return !looks_in_window_.empty() && looks_in_window_.back().stopped; }

  // For the report: CPU over the last stall window (or since watching began), the total seen,
  // and how many looks were taken.
  std::uint64_t cpu_in_window_ns() const;
  Clock::duration window() const;  // the span cpu_in_window_ns() covers
  std::uint64_t cpu_total_ns() const { return cpu_total_; }
  std::size_t looks() const { return looks_; }

 private:
  struct Look {
    Clock::time_point from, at;
    std::uint64_t cpu_ns = 0;
    bool eventful = false;  // a process or thread came or went, or output came
    bool wanted = false;    // a thread wanted a CPU (not while forkcheck held it)
    bool stopped = false;   // a process was stopped by a signal or a tracer not ours
  };
  // The looks that lie within `span` of the last one; the span they cover. `eventful`: a look in
  // it saw an event, a thread wanting a CPU or a stopped process (none of which is "blocked").
  Clock::duration covered(Clock::duration span, std::uint64_t& cpu, bool& eventful) const;
  // `span`, or the later half of the time watched when that is shorter (at least one look).
  Clock::duration judged(Clock::duration span) const;

  bool started_ = false;
  Clock::time_point first_, last_;
  std::deque<Look> looks_in_window_;
  std::optional<Clock::time_point> pending_output_;
  std::optional<Clock::time_point> still_since_;
  Clock::duration longest_still_{};
  std::optional<Clock::time_point> starved_since_;
  Clock::duration longest_starved_{};
  std::uint64_t run_delay_total_ = 0;
  std::uint64_t cpu_total_ = 0;
  std::size_t looks_ = 0;
};

}  // namespace fc::launch
