#include "reports/watchdog_text.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "reports/python_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

std::string stuck_text(const StuckProcess& stuck) {
  return stuck_process_text(stuck.pid, stuck.name,
                            static_cast<std::size_t>(std::max(stuck.threads, 0)), stuck.stuck_s,
                            stuck.wait.rfind("pause", 0) == 0);
}

std::string rest_text(const StuckProcess& stuck) {
  return rest_of_tree_text(stuck.rest_still, stuck.rest_cpu_share);
}

std::string called_after(const Watchdog& w) {
  return "(called after " + format_tenths(w.called_after_s.value_or(0)) + ")";
}

std::string all_pids(const std::vector<int>& pids) {
  std::string s;
  for (const int p : pids) s += (s.empty() ? "" : ", ") + std::to_string(p);
  return s;
}

const TreeLook kNoTree;

}  // namespace

std::string stuck_process_text(int pid, const std::string& name, std::size_t threads,
                               double stuck_s, bool pause) {
  const bool one = threads == 1;
  const std::string who = "pid " + std::to_string(pid) + (name.empty() ? "" : " [" + name + "]") +
                          " can never go on by itself: " +
                          (one ? std::string("its one thread has")
                               : "all " + std::to_string(threads) + " of its threads have");
  if (pause)
    return who + " waited in pause() for " + format_seconds(stuck_s) +
           ", and it catches no signal (nothing but its death ends that wait)";
  return who + " waited on a futex private to it, with no timeout, for " + format_seconds(stuck_s) +
         " (nothing but a signal could wake " + (one ? "it" : "them") + ")";
}

std::string sleeping_text(const Sleep& sleep) {
  std::string who = "pid " + std::to_string(sleep.pid) +
                    (sleep.process.empty() ? "" : " [" + sleep.process + "]");
  if (sleep.tid != sleep.pid) who += " thread " + std::to_string(sleep.tid);
  const double ends_in = sleep.ends_in_s;
  const std::string when = ends_in < 0 ? "a wait with a timeout"
                           : sleep.ends_exact
                               ? "a wait that ends by itself in " + format_tenths(ends_in)
                               : "a wait that ends by itself within " + format_tenths(ends_in);
  if (sleep.alarm)
    return who + " waits for its own alarm (SIGALRM" +
           (sleep.alarm->where ? ", set at " + python_frame_text(*sleep.alarm->where)
                               : std::string()) +
           "), " + when;
  return who + " sleeps in " + (sleep.wait.empty() ? "a timed wait" : sleep.wait) + ", " + when;
}

std::string rest_of_tree_text(bool still, double cpu_share) {
  if (still) return "the rest of the tree was still too";
  // Not still, yet next to no CPU: what else makes a tree not still (tree_activity.h), not work.
  if (cpu_share < 0.01)
    return "the rest of the tree was not still, though it used under 1% of a CPU (it wrote "
           "output, a process came or went, or a thread wanted a CPU)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", cpu_share * 100);
  return std::string("the rest of the tree kept working (") + buf + " of a CPU)";
}

std::string starved_text(double starved_s, double load_average, unsigned cpus) {
  std::string s = "runnable but waiting for a CPU for " + format_seconds(starved_s) +
                  ": the machine is overloaded";
  if (load_average >= 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " (load average %.1f on %u CPU%s)", load_average, cpus,
                  cpus == 1 ? "" : "s");
    s += buf;
  }
  return s;
}

std::string time_called_text(const Watchdog& w, const std::optional<StepHang>& hang) {
  const TreeLook& tree = w.tree ? *w.tree : kNoTree;
  const bool blocked = tree.state == "blocked";
  const bool has_stuck = w.stuck.has_value();
  const std::string& why = w.called_for;
  const std::string still_for = format_tenths(tree.still_s.value_or(0));
  const std::string deadline = format_tenths(w.timeout_s.value_or(0));
  const std::string hang_after =
      "the " + format_tenths(w.hang_after_s.value_or(0)) + " a stall may last (--hang-after)";
  if (why == "step" && hang) {
    const std::string how = blocked || !has_stuck
                                ? ", the whole tree blocked for " + still_for
                                : "; " + stuck_text(*w.stuck) + ", while " + rest_text(*w.stuck);
    return "pid " + std::to_string(hang->pid) + " entered \"" + hang->step +
           "\" and did not come back within " + format_tenths(hang->within_s.value_or(0)) + how +
           " (called after " + format_tenths(hang->waited_s.value_or(0)) + ")" +
           (blocked && has_stuck ? "; " + stuck_text(*w.stuck) : "");
  }
  if (why == "stall")
    return "the whole tree had been still for " + still_for + ", past " + hang_after + " " +
           called_after(w) + (has_stuck ? "; " + stuck_text(*w.stuck) : "");
  if (why == "stuck" && has_stuck)
    return stuck_text(*w.stuck) + ", past " + hang_after + "; " + rest_text(*w.stuck) + " " +
           called_after(w);
  if (blocked)
    return "blocked when its " + deadline + " deadline passed: the whole tree had been still for " +
           still_for + (has_stuck ? "; " + stuck_text(*w.stuck) : "");
  if (has_stuck)
    return "blocked in part when its " + deadline + " deadline passed: " + stuck_text(*w.stuck) +
           ", while " + rest_text(*w.stuck) + ": a partial deadlock";
  if (tree.state == "sleeping")
    return "asleep when its " + deadline +
           " deadline passed: " + sleeping_text(tree.sleep.value_or(Sleep{})) +
           ": a timeout, not a hang";
  if (tree.state == "starved")
    return "starved when its " + deadline +
           " deadline passed: " + starved_text(tree.starved_s, -1, 0) + ": a timeout, not a hang";
  return "still working when its " + deadline + " deadline passed: a timeout, not a hang";
}

std::string attached_text(const Watchdog& w, const std::optional<StepHang>& hang, bool hung) {
  if (!w.attached) return "";
  const Attached& a = *w.attached;
  const std::string pid = "pid " + std::to_string(a.pid);
  const std::vector<int>& ran = a.running_at_end;
  // The watch ends with the process itself: what it left running is said, not followed.
  const std::string left_behind =
      ran.empty() ? std::string()
                  : "; " +
                        std::string(ran.size() == 1 ? "1 process"
                                                    : std::to_string(ran.size()) + " processes") +
                        " of its tree still ran then (pid " + all_pids(ran) + "), not watched on";
  if (a.ended) {
    const std::string ended =
        pid + " ended while watched; its exit status went to its parent" +
        (a.parent_pid == 0 ? std::string() : ", pid " + std::to_string(a.parent_pid)) +
        ", which forkcheck cannot read" + left_behind;
    return hung ? time_called_text(w, hang) + "; then " + ended : ended;
  }
  if (!a.left_running) return "";
  const std::string left =
      "; left running as it was (" +
      (ran.size() == 1 ? std::string("1 process") : std::to_string(ran.size()) + " processes") +
      "): forkcheck attach ends nothing it did not start" +
      (hung ? std::string(" (--kill-on-hang does)") : std::string());
  const TreeLook& tree = w.tree ? *w.tree : kNoTree;
  const std::string watch =
      "the " + format_tenths(w.timeout_s.value_or(0)) + " watch ended (--timeout)";
  const std::string& why = w.called_for;
  if (why == "stall" || why == "stuck" || why == "step") return time_called_text(w, hang) + left;
  if (tree.state == "blocked")
    return "blocked when " + watch + ": the whole tree had been still for " +
           format_tenths(tree.still_s.value_or(0)) + (w.stuck ? "; " + stuck_text(*w.stuck) : "") +
           left;
  if (w.stuck)
    return "blocked in part when " + watch + ": " + stuck_text(*w.stuck) + ", while " +
           rest_text(*w.stuck) + ": a partial deadlock" + left;
  if (tree.state == "sleeping")
    return "asleep when " + watch + ": " + sleeping_text(tree.sleep.value_or(Sleep{})) +
           ": no hang seen" + left;
  if (tree.state == "starved")
    return "starved when " + watch + ": " + starved_text(tree.starved_s, -1, 0) + ": no hang seen" +
           left;
  return "still working when " + watch + ": no hang seen" + left;
}

std::string escalation_text(const Watchdog& w) {
  const bool term = w.sigterm, kill = w.sigkill;
#ifdef _WIN32
  // No signals on Windows: the polite request is Ctrl-Break, the end TerminateJobObject.
  if (kill && term) return "; Ctrl-Break was not enough, its job object was terminated";
  if (kill) return "; its job object was terminated";
  if (term) return "; Ctrl-Break ended it";
#else
  if (kill) return "; SIGTERM was not enough, SIGKILL ended it";
  if (term) return "; SIGTERM ended it";
#endif
  return "";
}

std::string survivors_text(const Watchdog& w) {
  std::string out;
  if (!w.leftovers_surviving.empty())
    out += "; still alive after every SIGKILL: pid " + all_pids(w.leftovers_surviving);
  if (!w.group_strangers.empty())
    out += "; pid " + all_pids(w.group_strangers) +
           " joined its process group from outside its tree and was spared (the group was not "
           "signalled as a whole)";
  return out;
}

std::string ended_by_itself_text(const Watchdog& w) {
  if (!w.exited_by_itself) return "";
  const std::string& why = w.called_for;
  const std::string what =
      why == "step" || why == "stall" || why == "stuck" ? "a stall was called on it"
      : why == "start-failures"
          ? "forkcheck was ending it for its processes' failures at start"
          : "its " + format_tenths(w.timeout_s.value_or(0)) + " deadline had passed";
  return " (" + what + ", but it ended by itself" +
         (w.deadline_to_end_s ? " " + format_tenths(*w.deadline_to_end_s) + " later" : "") +
         ", before forkcheck signalled it: the outcome is that of its own end)";
}

std::string died_after_look_text(const Watchdog& w) {
  if (!w.died_after_look) return "";
  const DiedAfterLook& d = *w.died_after_look;
  return (d.how.empty() ? "killed by a signal" : d.how) + " " + format_seconds(d.after_s) +
         " after forkcheck " + (d.what.empty() ? "looked at it" : d.what) +
         ": forkcheck may have caused it, so it is not said to be the program's own crash";
}

std::string tree_facts(const Watchdog& w, const std::string& outcome) {
  if (!w.tree) return "";
  const TreeLook& tree = *w.tree;
  const std::string state = tree.state.empty() ? "unknown" : tree.state;
  std::string line;
  if (state == "blocked") {
    line = "blocked";
    if (tree.still_s) line += " for " + format_tenths(*tree.still_s);
  } else if (state == "sleeping") {
    line = "asleep: " + sleeping_text(tree.sleep.value_or(Sleep{}));
  } else if (state == "working" || state == "starved") {
    // "at the deadline" only where one passed: a tree may be seen working when it ends by itself.
    const bool at_deadline = outcome == "timeout" || w.deadline_passed;
    line = state == "starved" ? "starved (wanting a CPU, getting next to none)"
           : at_deadline      ? "still working at the deadline"
                              : "working when last looked at";
  } else {
    line = "state of the tree unknown";
  }
  std::vector<std::string> facts;
  if (tree.cpu_s_in_window) {
    std::string f = format_cpu(*tree.cpu_s_in_window) + " of CPU";
    if (tree.window_s) f += " in the last " + format_tenths(*tree.window_s);
    facts.push_back(std::move(f));
  }
  if (tree.processes)
    facts.push_back(
        counted(static_cast<std::size_t>(std::max(*tree.processes, 0)), "process", "processes"));
  if (tree.threads)
    facts.push_back(
        counted(static_cast<std::size_t>(std::max(*tree.threads, 0)), "thread", "threads"));
  for (size_t i = 0; i < facts.size(); ++i) line += (i == 0 ? ": " : ", ") + facts[i];
  // What the threads were waiting in, from /proc: "futex (5), wait4 (2)".
  if (!tree.waiting_in.empty())
    line += (state == "blocked" ? " waiting in " : "; in ") + tree.waiting_in;
  return line;
}

}  // namespace fc::reports
