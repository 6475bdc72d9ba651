// Supervisor::run's loop, written once for every OS: the queue of specs and its slots (a parked or
// ending child holds none: watchdog.h's may_start), an interrupt (nothing new starts; what runs is
// ended at once, without stacks), the order of each round (wait and read; exits first, so that a
// child that exited by itself is judged by its own exit; the looks at the trees; the watchdog's
// tick) and when a job is over (its child ended, and its pipes closed or kLinger passed). The OS
// part (supervisor_posix.cc, supervisor_win32.cc) only serves it, as ninja's build loop drives
// subprocess-posix.cc and -win32.cc: start a job, wait for any of its handles until a time and
// read what came, notice an exit, look at a tree, finish a job.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "harness/supervise/clock.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/watchdog.h"

namespace fc::harness {

// After the child itself ended, how long its descendants may keep the output pipes open.
inline constexpr double kLingerS = 1.0;

// `Job` has: index, r (ChildResult), ended_at (optional time point), next_tick, watchdog, channel,
// pipes_open(). `Os` serves the loop:
//   bool ours(const Job&)                 a job of the specs (not one the OS part started itself,
//                                         such as a debugger taking stacks)
//   void round_begins(Clock::time_point)  what the OS part does first in every round
//   void interrupted()                    after an interrupt, once: drop what it meant to start
//   std::unique_ptr<Job> start(size_t index, const LaunchSpec&)
//   Clock::time_point wake_for(const Job&, Clock::time_point now)  an earlier wake it needs
//   Clock::time_point wait_and_read(const std::list<std::unique_ptr<Job>>&, Clock::time_point)
//                                         wait until something came or the time, read it; now
//   void note_exit(Job&, Clock::time_point)   sets ended_at (and tells the watchdog) if it exited
//   void before_looks(Clock::time_point)  (orphans to their trees, on POSIX)
//   void look(Job&, Clock::time_point)
//   void after_looks(Clock::time_point)   (stacks being taken go on, on POSIX)
//   bool may_finish(const Job&)           (not while its stacks are being taken, on POSIX)
//   void finish(Job&, Clock::time_point)  ends what is left of its tree, fills in its result
//   void not_ours_ended(Job&, Clock::time_point)
//   void loop_ends()
template <class Job, class Os>
void run_loop(const std::vector<LaunchSpec>& specs, int jobs, const Supervisor::Done& done,
              std::list<std::unique_ptr<Job>>& running, Os& os) {
  std::deque<size_t> pending;
  for (size_t i = 0; i < specs.size(); ++i) pending.push_back(i);
  const size_t max_jobs = static_cast<size_t>(std::max(1, jobs));
  const Clock::duration linger = seconds(kLingerS);
  bool interrupt_told = false;

  while (!pending.empty() || !running.empty()) {
    if (interrupted() && !interrupt_told) {
      interrupt_told = true;
      for (size_t i : pending) {
        ChildResult r;
        r.interrupted_by = interrupted();
        done(i, std::move(r));
      }
      pending.clear();
      os.interrupted();
      for (auto& j : running)
        if (os.ours(*j)) j->watchdog->interrupted(interrupted(), Clock::now());
    }
    os.round_begins(Clock::now());
    size_t busy = 0, ours = 0;
    for (const auto& j : running) {
      if (!os.ours(*j)) continue;
      busy += j->watchdog->needs_cpu(*j->channel) ? 1 : 0;
      ++ours;
    }
    while (may_start(busy, ours, max_jobs) && !pending.empty() && !interrupted()) {
      const size_t i = pending.front();
      pending.pop_front();
      auto job = os.start(i, specs[i]);
      if (!job->r.started) {
        done(i, std::move(job->r));
        continue;
      }
      running.push_back(std::move(job));
      ++busy;
      ++ours;
    }
    if (running.empty()) continue;

    Clock::time_point now = Clock::now();
    Clock::time_point wake = now + std::chrono::seconds(1);
    for (const auto& j : running) {
      wake = std::min(wake, j->ended_at ? *j->ended_at + linger : j->next_tick);
      wake = std::min(wake, os.wake_for(*j, now));
    }
    now = os.wait_and_read(running, wake);

    for (auto& j : running)
      if (!j->ended_at) os.note_exit(*j, now);
    os.before_looks(now);
    for (auto& j : running)
      if (!j->ended_at && os.ours(*j) && j->watchdog->look_due(now)) os.look(*j, now);
    os.after_looks(now);

    for (auto it = running.begin(); it != running.end();) {
      Job& j = **it;
      j.next_tick = j.watchdog->tick(now, *j.channel);
      if (os.may_finish(j) && j.ended_at && (!j.pipes_open() || now >= *j.ended_at + linger)) {
        os.finish(j, now);
        std::unique_ptr<Job> owned = std::move(*it);
        it = running.erase(it);
        if (os.ours(*owned))
          done(owned->index, std::move(owned->r));
        else
          os.not_ours_ended(*owned, now);
        continue;
      }
      ++it;
    }
  }
  os.loop_ends();
}

}  // namespace fc::harness
