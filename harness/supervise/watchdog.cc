#include "harness/supervise/watchdog.h"

#include "harness/supervise/classify.h"

#include <algorithm>
#include <cstdio>

#include "harness/platform/host.h"
#include "harness/supervise/clock.h"
#include "harness/supervise/step_watch.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

using launch::TreeActivity;
using std::chrono::duration;

double secs(Clock::duration d) { return duration<double>(d).count(); }

}  // namespace

Watchdog::Watchdog(const LaunchSpec& spec, ChildResult& result, TreeControl& control,
                   Clock::time_point start)
    : spec_(spec),
      r_(result),
      control_(control),
      start_(start),
      // No deadline: one no run reaches (a century).
      deadline_(start + seconds(spec.timeout_s > 0 ? spec.timeout_s : 100 * 365 * 86400.0)) {
  r_.timeout_s = spec.timeout_s;
}

double Watchdog::since_start(Clock::time_point t) const { return secs(t - start_); }

void Watchdog::looked(const LookFacts& f) {
  const Clock::time_point before = activity_.last_look();
  const bool first = !activity_.started();
  if (first)
    activity_.start(f.at);
  else
    activity_.look(f.at, f.change, f.held);
  last_cpu_share_ = !first && f.at > before
                        ? static_cast<double>(f.change.cpu_ns) / 1e9 / secs(f.at - before)
                        : 0;
  last_ = f;
  if (!f.sleeping.empty()) slept_at_ = f.at;
  if (!spec_.on_look) return;
  LiveStatus s;
  s.elapsed_s = since_start(f.at);
  s.processes = f.processes;
  s.cpu_share = last_cpu_share_;
  s.still_s = secs(still_for());
  s.starved_s = secs(activity_.starved_for());
  spec_.on_look(s);
}

Clock::duration Watchdog::still_for() const {
  if (sleeping()) return Clock::duration::zero();
  const Clock::duration still = activity_.still_for();
  return slept_at_ ? std::min(still, activity_.last_look() - *slept_at_) : still;
}

std::optional<TreeSleep> Watchdog::tree_sleep() const {
  if (last_.sleeping.empty()) return std::nullopt;
  const SleepingThread& s = last_.sleeping.front();
  TreeSleep t;
  t.pid = s.pid;
  t.tid = s.tid;
  t.process = s.process;
  t.wait = syscall_name(s.syscall);
  t.since_s = since_start(s.since);
  if (s.ends) t.ends_in_s = std::max(0.0, secs(*s.ends - last_.at));
  t.ends_exact = s.ends_exact;
  t.alarm = s.alarm;
  t.alarm_where = s.alarm_where;
  if (s.alarm) t.wait = "";
  return t;
}

void Watchdog::exited(Clock::time_point) { exited_ = true; }

bool Watchdog::look_due(Clock::time_point now) const {
  return !settled() && activity_.look_due(now);
}

bool Watchdog::needs_cpu(const ChannelReader& channel) const {
  return phase_ == Phase::kWatching && !exited_ && !taking_ &&
         !StepWatch::parked(channel, activity_);
}

std::optional<StuckProcess> Watchdog::longest_stuck(Clock::time_point now,
                                                    Clock::duration at_least) const {
  std::optional<StuckProcess> out;
  for (const auto& [pid, s] : last_.stuck)
    if (now - s.since >= at_least && (!out || s.since < out->since)) out = s;
  return out;
}

ProcessStall Watchdog::process_stall(const StuckProcess& s, Clock::time_point now) const {
  ProcessStall p;
  p.pid = s.pid;
  p.ppid = s.ppid;
  p.name = s.name;
  p.threads = s.threads;
  p.pause = s.pause;
  p.since_s = since_start(s.since);
  p.stuck_s = secs(now - s.since);
  // The stuck process used no CPU: what the tree used is the rest's.
  const double window = secs(activity_.window());
  p.rest_cpu_share =
      window > 0 ? static_cast<double>(activity_.cpu_in_window_ns()) / 1e9 / window : 0;
  p.rest_still = activity_.blocked();
  return p;
}

TreeFacts Watchdog::tree_facts() {
  TreeFacts t;
  const TreeActivity& a = activity_;
  t.blocked = still();
  // Asleep: a thread in a long timed wait, and the tree next to idle over the window (output a
  // moment ago, the print before the sleep, does not make it working).
  const bool idle = secs(a.window()) > 0 && static_cast<double>(a.cpu_in_window_ns()) / 1e9 <
                                                TreeActivity::kIdleShare * secs(a.window());
  t.sleep = a.blocked() || idle ? tree_sleep() : std::nullopt;
  t.still_s = secs(still_for());
  t.window_s = secs(a.window());
  t.cpu_s_in_window = static_cast<double>(a.cpu_in_window_ns()) / 1e9;
  t.cpu_s = static_cast<double>(a.cpu_total_ns()) / 1e9;
  t.longest_still_s = secs(a.longest_still());
  t.starved_s = secs(a.starved_for());
  t.starved = a.starved_for() >= TreeActivity::kStallWindow;
  t.longest_starved_s = secs(a.longest_starved());
  t.run_queue_s = static_cast<double>(a.run_delay_total_ns()) / 1e9;
  t.stopped = a.stopped();
  t.looks = a.looks();
  control_.describe(t);
  return t;
}

StallNote Watchdog::tree_note(Clock::time_point now) {
  const TreeFacts t = tree_facts();
  StallNote n;
  n.kind = StallNote::Kind::kTree;
  n.after_s = since_start(now);
  n.still_s = t.still_s;
  n.waiting_in = t.waiting_in;
  n.processes = t.processes;
  n.threads = t.threads;
  n.cpu_s_in_window = t.cpu_s_in_window;
  n.window_s = t.window_s;
  n.first = !r_.stall;
  return n;
}

Clock::time_point Watchdog::tick(Clock::time_point now, ChannelReader& channel) {
  if (phase_ == Phase::kWatching) {
    if (exited_) {
      if (taking_) control_.stop_stacks("the program ended before the debugger finished");
    } else if (interrupted_) {
      if (taking_) control_.stop_stacks("forkcheck was interrupted before the debugger finished");
      end(now, std::min(spec_.grace_s, WatchdogTimes::kGraceOnInterruptS));
    } else {
      watch(now, channel);
    }
  }
  if (phase_ == Phase::kStacks) {
    if (taking_ && (exited_ || interrupted_))
      control_.stop_stacks(exited_ ? "the program ended before the debugger finished"
                                   : "forkcheck was interrupted before the debugger finished");
    else if (taking_ && now >= stacks_until_) {
      control_.stop_stacks(
          "the stacks budget left once time was called (" +
          reports::format_tenths(secs(stacks_until_ - (start_ + seconds(r_.called_after_s)))) +
          ") was spent before its debugger finished");
    }
    if (!taking_)
      end(now, std::min(spec_.grace_s, interrupted_ ? WatchdogTimes::kGraceOnInterruptS
                                                    : WatchdogTimes::kGraceAfterCallS));
  }
  // An interrupt during a grace period shortens it: Ctrl-C ends the run within 2 s.
  if (phase_ == Phase::kEnding && interrupted_ &&
      term_at_ + seconds(grace_s_) > interrupted_at_ + seconds(WatchdogTimes::kGraceOnInterruptS))
    grace_s_ = std::max(0.0, std::chrono::duration<double>(interrupted_at_ - term_at_).count() +
                                 WatchdogTimes::kGraceOnInterruptS);
  if (phase_ == Phase::kEnding && !exited_ && now >= term_at_ + seconds(grace_s_)) {
    if (control_.kill_all()) r_.sent_sigkill = true;
    phase_ = Phase::kKilled;
  }

  // When to be asked again.
  switch (phase_) {
    case Phase::kWatching: {
      if (exited_) return now + std::chrono::seconds(1);
      Clock::time_point t = std::min(deadline_, activity_.next_look());
      const Clock::time_point due = StepWatch::next_due(channel, deadline_);
      if (due > now) t = std::min(t, due);
      if (taking_) t = std::min(t, stacks_until_);
      return std::max(t, now);
    }
    case Phase::kStacks:
      return std::max(stacks_until_, now);
    case Phase::kEnding:
      return exited_ ? now + std::chrono::seconds(1) : std::max(term_at_ + seconds(grace_s_), now);
    case Phase::kKilled:
      return now + std::chrono::milliseconds(50);
  }
  return now + std::chrono::seconds(1);
}

// Time is called for the failures from here: the next watch() ends it (an interrupt or its own
// exit may come first, and it is still what time was called for).
void Watchdog::failed_at_start(std::size_t processes) {
  const int enough = spec_.end_after_start_failures;
  if (enough <= 0 || processes < static_cast<std::size_t>(enough)) return;
  if (phase_ == Phase::kWatching && !exited_ && r_.failing_at_start.empty()) {
    r_.failing_at_start =
        std::to_string(processes) +
        " of its processes failed at start with the same RuntimeError (\"An attempt has been made "
        "to start a new process before the current process has finished its bootstrapping "
        "phase\"): the main module has no `if __name__ == \"__main__\":` guard, and a Pool "
        "starts new workers for ever; forkcheck ended it rather than wait for the deadline";
    r_.called_for = TimeCalled::kStartFailures;
  }
}

void Watchdog::watch(Clock::time_point now, ChannelReader& channel) {
  if (r_.called_for == TimeCalled::kStartFailures) {
    call(now);
    return;
  }
  if (now >= deadline_) {
    r_.called_for = TimeCalled::kDeadline;
    call(now);
    return;
  }
  if (taking_ && now >= stacks_until_)
    control_.stop_stacks("the stall's stacks were not all in within their budget");
  // Still through a whole window since the last look that found a thread asleep: the window the
  // sleep filled is no stillness (a thread just woken, waiting for a CPU on a busy machine, was
  // once said stalled 0.3 s after its sleep ended).
  const bool blocked = activity_.blocked_through_window() && !sleeping() &&
                       still_for() >= TreeActivity::kStallWindow;
  const std::optional<StuckProcess> stuck = longest_stuck(now);
  if (spec_.hang_after_s > 0) {
    if (blocked && secs(still_for()) >= spec_.hang_after_s) {
      r_.called_for = TimeCalled::kStall;
      r_.hang_after_s = spec_.hang_after_s;
      call(now);
      return;
    }
    if (stuck && secs(now - stuck->since) >= spec_.hang_after_s) {
      r_.called_for = TimeCalled::kStuck;
      r_.hang_after_s = spec_.hang_after_s;
      call(now);
      return;
    }
  }
  // An overdue step beside a process proven stuck (two looks prove it): no window to wait out.
  if (auto hang = StepWatch::check(
          channel, activity_, longest_stuck(now, TreeActivity::kLookEvery / 2).has_value(), now)) {
    r_.step_hang = *hang;
    r_.called_for = TimeCalled::kStep;
    call(now);
    return;
  }
  if (!spec_.note_stalls) return;

  // Said live, the program left running. The whole tree first: a stuck process in it is named.
  if (blocked && !tree_stalled_) {
    tree_stalled_ = true;
    StallNote n = tree_note(now);
    if (stuck) n.process = process_stall(*stuck, now);
    for (const auto& [pid, s] : last_.stuck) stuck_said_.insert(pid);
    if (n.first) r_.stall = n;
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kStalled, n, nullptr);
    if (n.first && spec_.collect_stacks && !taking_) {
      std::map<launch::ProcessId, Attach> which;
      for (launch::ProcessId p : last_.pids)
        which[p] = last_.stuck.count(p)    ? Attach::kLong
                   : last_.asleep.count(p) ? Attach::kBrief
                                           : Attach::kNone;
      take_live_stacks(which, now);
    }
  } else if (tree_stalled_ && !activity_.blocked()) {
    tree_stalled_ = false;
    StallNote n = r_.stall ? *r_.stall : StallNote();
    n.resumed_after_s = since_start(now);
    if (r_.stall && r_.stall->kind == StallNote::Kind::kTree && r_.stall->resumed_after_s < 0)
      r_.stall->resumed_after_s = n.resumed_after_s;
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kResumed, n, nullptr);
  } else if (tree_stalled_ && stuck && r_.stall && !r_.stall->process &&
             r_.stall->resumed_after_s < 0) {
    // A process of the still tree proven stuck since it stalled (on a busy machine the tree's
    // window can pass before a process's own): the stall's record names it, and it is said.
    r_.stall->process = process_stall(*stuck, now);
    for (const auto& [pid, s] : last_.stuck) stuck_said_.insert(pid);
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kStuck, *r_.stall, nullptr);
  }
  // One process stuck while the rest of the tree works: a stall of its own.
  for (const auto& [pid, s] : last_.stuck) {
    if (tree_stalled_ || stuck_said_.count(pid) || now - s.since < TreeActivity::kStallWindow)
      continue;
    stuck_said_.insert(pid);
    StallNote n = tree_note(now);
    n.kind = StallNote::Kind::kProcess;
    n.process = process_stall(s, now);
    n.still_s = n.process->stuck_s;
    if (n.first) r_.stall = n;
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kStalled, n, nullptr);
    if (n.first && spec_.collect_stacks && !taking_) take_live_stacks({{pid, Attach::kLong}}, now);
  }
  for (auto it = stuck_said_.begin(); it != stuck_said_.end();)  // gone, or going on again
    it = last_.stuck.count(*it) ? std::next(it) : stuck_said_.erase(it);
  // Asleep in a wait that ends by itself: said once, never a stall.
  if (activity_.blocked() && sleeping() && !sleep_said_) {
    sleep_said_ = true;
    StallNote n = tree_note(now);
    n.sleep = tree_sleep();
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kSleeping, n, nullptr);
  }
  // Starvation: said once (the status line keeps telling it), never a hang.
  const double starved = secs(activity_.starved_for());
  if (starved >= secs(TreeActivity::kStallWindow) && !starved_said_) {
    starved_said_ = true;
    StallNote n = tree_note(now);
    n.starved_s = starved;
    n.load_average = load_average();
    n.cpus = cpu_count();
    if (r_.starved_noted_s == 0) r_.starved_noted_s = starved;
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kStarved, n, nullptr);
  }
}

void Watchdog::take_live_stacks(const std::map<launch::ProcessId, Attach>& which,
                                Clock::time_point now) {
  StacksRequest req;
  req.processes = which;
  req.source_lines = spec_.stacks_source_lines;
  req.brief_s = WatchdogTimes::kBriefAttachS;
  req.budget_s = std::min(spec_.stacks_budget_s > 0 ? std::max(spec_.stacks_budget_s, 1.0) : 1.0,
                          WatchdogTimes::kLiveStacksS);
  taking_ = true;
  taking_for_end_ = false;
  stall_taken_at_ = now;
  stall_taken_pids_.clear();
  for (const auto& [pid, a] : which) stall_taken_pids_.insert(pid);
  stacks_until_ = now + seconds(req.budget_s);
  control_.take_stacks(req);  // may answer at once (stacks_in)
}

namespace {

// Whether `pid`'s threads in `stacks` run CPython's evaluation loop (a native frame of it) and none
// has a Python frame.
bool python_frames_missing(const Stacks& stacks, launch::ProcessId pid) {
  bool interpreter = false;
  for (const auto& t : stacks.threads) {
    if (t.pid != pid) continue;
    if (!t.python.empty()) return false;
    for (const auto& f : t.frames)
      interpreter = interpreter || f.function.rfind("_PyEval_", 0) == 0 ||
                    f.function.rfind("PyEval_", 0) == 0;
  }
  return interpreter;
}

}  // namespace

void Watchdog::call(Clock::time_point now) {
  control_.look_now();  // what the report says of the tree is as of this moment
  r_.called_after_s = since_start(now);
  r_.tree = tree_facts();
  // At the deadline, or a step called on it, a stuck process is a hang however short the watch
  // (proven by two looks); a stall has waited its window already.
  const Clock::duration proof = r_.called_for == TimeCalled::kDeadline || r_.step_hang
                                    ? TreeActivity::kLookEvery / 2
                                    : TreeActivity::kStallWindow;
  if (const auto stuck = longest_stuck(now, proof)) r_.stuck = process_stall(*stuck, now);
  phase_ = Phase::kStacks;
  if (r_.failing_at_start.empty() && !interrupted_) {
    r_.waits = control_.wait_graph();
    r_.wait_chain = follow_waits(r_.waits);
  }
  if (!r_.failing_at_start.empty()) {
    if (taking_) control_.stop_stacks("not needed: its processes' error at start is the cause");
    return;  // tick() ends it
  }
  // A process forkcheck did not start is stopped by a debugger only when hung (it could not go on
  // anyway): a working one whose watch ends is left as it was, unlooked at.
  const bool leave_be = spec_.attach_pid > 0 && !called_a_hang(r_);
  if (!spec_.collect_stacks || interrupted_ || leave_be) {
    if (taking_) control_.stop_stacks("forkcheck was interrupted before the debugger finished");
    return;  // tick() ends it
  }
  // After the deadline, what is left of its promise; after a stall or a step (long before it,
  // as a rule), the spec's budget, but never past the deadline's own.
  const double budget = r_.called_for == TimeCalled::kDeadline
                            ? std::min(spec_.stacks_budget_s, WatchdogTimes::kStacksAfterCallS)
                            : std::min(spec_.stacks_budget_s,
                                       secs(deadline_ - now) + WatchdogTimes::kStacksAfterCallS);
  if (taking_) {
    // A stall's stacks being taken become the end's, within what is left after the call.
    taking_for_end_ = true;
    stacks_until_ = std::min(stacks_until_, now + seconds(budget));
    return;
  }
  // Stacks of a stall, still the processes' own: the whole tree has been still since they were
  // taken, or the process has been stuck since.
  std::set<launch::ProcessId> reused;
  if (!stall_taken_.method.empty()) {
    const bool tree_still = activity_.blocked() && now - activity_.still_for() <= stall_taken_at_;
    for (launch::ProcessId p : stall_taken_pids_) {
      auto s = last_.stuck.find(p);
      if (tree_still || (s != last_.stuck.end() && s->second.since <= stall_taken_at_))
        reused.insert(p);
    }
  }
  // A process forkcheck attached to has no bootstrap to give its Python frames: one whose stall
  // stacks show CPython's evaluation loop but no Python frame is looked at again now that it is
  // hung, by a debugger that reads them where the interpreter lets it (gdb's py-bt).
  if (spec_.attach_pid > 0)
    for (auto it = reused.begin(); it != reused.end();)
      it = python_frames_missing(stall_taken_, *it) ? reused.erase(it) : std::next(it);
  if (!reused.empty()) {
    r_.stacks.method = stall_taken_.method;
    // Two takings' notes side by side (each counts the processes it looked at): each says when.
    r_.stacks.python_note = stall_taken_.python_note.empty()
                                ? ""
                                : "when the stall was first seen: " + stall_taken_.python_note;
    r_.stacks.note = stall_taken_.note;
    for (const auto& t : stall_taken_.threads)
      if (reused.count(t.pid)) r_.stacks.threads.push_back(t);
    r_.stacks.note += std::string(r_.stacks.note.empty() ? "" : "; ") +
                      "taken when the stall was first seen, " +
                      (reused.size() == stall_taken_pids_.size() && activity_.blocked()
                           ? "the tree still ever since"
                           : "its stuck processes still stuck ever since");
  }
  StacksRequest req;
  req.ending = true;
  req.source_lines = spec_.stacks_source_lines;
  req.budget_s = budget;
  req.brief_s = budget;
  for (launch::ProcessId p : last_.pids)
    if (!reused.count(p)) req.processes[p] = Attach::kLong;
  if (req.processes.empty() || budget <= 0) return;
  taking_ = true;
  taking_for_end_ = true;
  stacks_until_ = now + seconds(budget);
  control_.take_stacks(req);
}

void Watchdog::stacks_in(Stacks stacks, Clock::time_point) {
  taking_ = false;
  if (taking_for_end_) {
    taking_for_end_ = false;
    if (r_.stacks.method.empty()) {
      r_.stacks = std::move(stacks);
      return;
    }
    // Merged with the stall's stacks kept for the stuck processes.
    if (!stacks.note.empty()) r_.stacks.note += "; " + stacks.note;
    if (!stacks.python_note.empty())
      r_.stacks.python_note +=
          (r_.stacks.python_note.empty() ? "" : "; at the end: ") + stacks.python_note;
    for (auto& t : stacks.threads) r_.stacks.threads.push_back(std::move(t));
    return;
  }
  stall_taken_ = std::move(stacks);
  if (r_.stall && r_.stall_stacks.method.empty()) {
    r_.stall_stacks = stall_taken_;
    if (spec_.on_stall) spec_.on_stall(StallNote::Event::kStacksTaken, *r_.stall, &r_.stall_stacks);
  }
}

void Watchdog::end(Clock::time_point now, double grace_s) {
  phase_ = Phase::kEnding;
  term_at_ = now;
  grace_s_ = grace_s;
  switch (control_.ask_to_end()) {
    case TreeControl::Sent::kNothing:
      break;
    case TreeControl::Sent::kRequest:
      r_.sent_sigterm = true;
      break;
    case TreeControl::Sent::kKill:
      r_.sent_sigkill = true;
      phase_ = Phase::kKilled;
      break;
  }
}

void Watchdog::interrupted(int signal, Clock::time_point now) {
  if (interrupted_ == 0) {
    interrupted_ = signal;
    interrupted_at_ = now;
  }
  if (r_.interrupted_by == 0) r_.interrupted_by = signal;
}

void Watchdog::paused(Clock::time_point from, Clock::time_point to, ChannelReader& channel) {
  if (to <= from) return;
  const Clock::duration d = to - from;
  deadline_ += d;
  term_at_ += d;
  stacks_until_ += d;
  for (auto& [key, step] : channel.open_steps()) step.begun += d;
  activity_.restart(to);
  last_.stuck.clear();
  r_.paused_s += secs(d);
}

void Watchdog::finish(Clock::time_point) {
  // Time was never called: no state to report, but what the watching measured.
  const TreeActivity& a = activity_;
  r_.tree.cpu_s = static_cast<double>(a.cpu_total_ns()) / 1e9;
  r_.tree.longest_still_s = secs(a.longest_still());
  r_.tree.longest_starved_s = secs(a.longest_starved());
  r_.tree.run_queue_s = static_cast<double>(a.run_delay_total_ns()) / 1e9;
  r_.tree.looks = a.looks();
}

bool ends_attached_tree(const LaunchSpec& spec, const ChildResult& r) {
  const bool proven = r.called_for == TimeCalled::kStall || r.called_for == TimeCalled::kStuck ||
                      r.called_for == TimeCalled::kStep;
  return spec.end_attached && proven;
}

}  // namespace fc::harness
