#include "reports/watchdog_text.h"

#include <cstdio>
#include <vector>

#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

double number(const json& obj, const char* key, double fallback = 0) {
  const json& n = member(obj, key);
  return n.is_number() ? n.get<double>() : fallback;
}

std::string stuck_text(const json& stuck) {
  return stuck_process_text(static_cast<int>(number(stuck, "pid")), field(stuck, "name"),
                            static_cast<std::size_t>(number(stuck, "threads")),
                            number(stuck, "stuck_s"), field(stuck, "wait").rfind("pause", 0) == 0);
}

std::string rest_text(const json& stuck) {
  return rest_of_tree_text(is_true(stuck, "rest_still"), number(stuck, "rest_cpu_share"));
}

std::string called_after(const json& w) {
  return "(called after " + format_tenths(number(w, "called_after_s")) + ")";
}

std::string pid_list(const json& pids) {
  std::string s;
  for (const auto& p : pids) s += (s.empty() ? "" : ", ") + display(p);
  return s;
}

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

std::string sleeping_text(const json& sleep) {
  const std::string name = field(sleep, "process");
  const double pid = number(sleep, "pid"), tid = number(sleep, "tid");
  std::string who =
      "pid " + display(member(sleep, "pid")) + (name.empty() ? "" : " [" + name + "]");
  if (tid != pid) who += " thread " + display(member(sleep, "tid"));
  const double ends_in = number(sleep, "ends_in_s", -1);
  const std::string when = ends_in < 0 ? "a wait with a timeout"
                           : is_true(sleep, "ends_exact")
                               ? "a wait that ends by itself in " + format_tenths(ends_in)
                               : "a wait that ends by itself within " + format_tenths(ends_in);
  const json& alarm = member(sleep, "alarm");
  if (alarm.is_object()) {
    const json& where = member(alarm, "where");
    return who + " waits for its own alarm (SIGALRM" +
           (where.is_object() ? ", set at " + python_frame_text(where) : std::string()) + "), " +
           when;
  }
  return who + " sleeps in " + field(sleep, "wait", "a timed wait") + ", " + when;
}

std::string rest_of_tree_text(bool still, double cpu_share) {
  if (still) return "the rest of the tree was still too";
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

std::string time_called_text(const json& w, const json& hang) {
  const json& tree = member(w, "tree");
  const std::string state = field(tree, "state");
  const bool blocked = state == "blocked";
  const json& stuck = member(w, "stuck");
  const bool has_stuck = stuck.is_object();
  const std::string why = field(w, "called_for");
  const std::string still_for = format_tenths(number(tree, "still_s"));
  const std::string deadline = format_tenths(number(w, "timeout_s"));
  const std::string hang_after =
      "the " + format_tenths(number(w, "hang_after_s")) + " a stall may last (--hang-after)";
  if (why == "step" && hang.is_object()) {
    const std::string how = blocked || !has_stuck
                                ? ", the whole tree blocked for " + still_for
                                : "; " + stuck_text(stuck) + ", while " + rest_text(stuck);
    return "pid " + field(hang, "pid") + " entered \"" + field(hang, "step") +
           "\" and did not come back within " + format_tenths(number(hang, "within_s")) + how +
           " (called after " + format_tenths(number(hang, "waited_s")) + ")" +
           (blocked && has_stuck ? "; " + stuck_text(stuck) : "");
  }
  if (why == "stall")
    return "the whole tree had been still for " + still_for + ", past " + hang_after + " " +
           called_after(w) + (has_stuck ? "; " + stuck_text(stuck) : "");
  if (why == "stuck" && has_stuck)
    return stuck_text(stuck) + ", past " + hang_after + "; " + rest_text(stuck) + " " +
           called_after(w);
  if (blocked)
    return "blocked when its " + deadline + " deadline passed: the whole tree had been still for " +
           still_for + (has_stuck ? "; " + stuck_text(stuck) : "");
  if (has_stuck)
    return "blocked in part when its " + deadline + " deadline passed: " + stuck_text(stuck) +
           ", while " + rest_text(stuck) + ": a partial deadlock";
  if (state == "sleeping")
    return "asleep when its " + deadline +
           " deadline passed: " + sleeping_text(member(tree, "sleep")) + ": a timeout, not a hang";
  if (state == "starved")
    return "starved when its " + deadline +
           " deadline passed: " + starved_text(number(tree, "starved_s"), -1, 0) +
           ": a timeout, not a hang";
  return "still working when its " + deadline + " deadline passed: a timeout, not a hang";
}

std::string attached_text(const json& w, const json& hang, bool hung) {
  const json& a = member(w, "attached");
  if (!a.is_object()) return "";
  const std::string pid = "pid " + display(member(a, "pid"));
  const std::string parent = display(member(a, "parent_pid"));
  const json& ran = list(a, "running_at_end");
  // The watch ends with the process itself: what it left running is said, not followed.
  const std::string left_behind =
      ran.empty() ? std::string()
                  : "; " +
                        std::string(ran.size() == 1 ? "1 process"
                                                    : std::to_string(ran.size()) + " processes") +
                        " of its tree still ran then (pid " + pid_list(ran) + "), not watched on";
  if (is_true(a, "ended")) {
    const std::string ended =
        pid + " ended while watched; its exit status went to its parent" +
        (parent.empty() || parent == "0" ? std::string() : ", pid " + parent) +
        ", which forkcheck cannot read" + left_behind;
    return hung ? time_called_text(w, hang) + "; then " + ended : ended;
  }
  if (!is_true(a, "left_running")) return "";
  const std::string left =
      "; left running as it was (" +
      (ran.size() == 1 ? std::string("1 process") : std::to_string(ran.size()) + " processes") +
      "): forkcheck attach ends nothing it did not start" +
      (hung ? std::string(" (--kill-on-hang does)") : std::string());
  const json& tree = member(w, "tree");
  const std::string state = field(tree, "state");
  const json& stuck = member(w, "stuck");
  const std::string watch =
      "the " + format_tenths(number(w, "timeout_s")) + " watch ended (--timeout)";
  const std::string why = field(w, "called_for");
  if (why == "stall" || why == "stuck" || why == "step") return time_called_text(w, hang) + left;
  if (state == "blocked")
    return "blocked when " + watch + ": the whole tree had been still for " +
           format_tenths(number(tree, "still_s")) +
           (stuck.is_object() ? "; " + stuck_text(stuck) : "") + left;
  if (stuck.is_object())
    return "blocked in part when " + watch + ": " + stuck_text(stuck) + ", while " +
           rest_text(stuck) + ": a partial deadlock" + left;
  if (state == "sleeping")
    return "asleep when " + watch + ": " + sleeping_text(member(tree, "sleep")) + ": no hang seen" +
           left;
  if (state == "starved")
    return "starved when " + watch + ": " + starved_text(number(tree, "starved_s"), -1, 0) +
           ": no hang seen" + left;
  return "still working when " + watch + ": no hang seen" + left;
}

std::string escalation_text(const json& w) {
  const bool term = is_true(w, "sigterm"), kill = is_true(w, "sigkill");
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

std::string survivors_text(const json& w) {
  std::string out;
  if (const json& left = list(w, "leftovers_surviving"); !left.empty())
    out += "; still alive after every SIGKILL: pid " + pid_list(left);
  if (const json& strangers = list(w, "group_strangers"); !strangers.empty())
    out += "; pid " + pid_list(strangers) +
           " joined its process group from outside its tree and was spared (the group was not "
           "signalled as a whole)";
  return out;
}

std::string ended_by_itself_text(const json& w) {
  if (!is_true(w, "exited_by_itself")) return "";
  const std::string why = field(w, "called_for");
  const std::string what =
      why == "step" || why == "stall" || why == "stuck" ? "a stall was called on it"
      : why == "start-failures"
          ? "forkcheck was ending it for its processes' failures at start"
          : "its " + format_tenths(number(w, "timeout_s")) + " deadline had passed";
  const json& later = member(w, "deadline_to_end_s");
  return " (" + what + ", but it ended by itself" +
         (later.is_number() ? " " + format_tenths(later.get<double>()) + " later" : "") +
         ", before forkcheck signalled it: the outcome is that of its own end)";
}

std::string died_after_look_text(const json& w) {
  const json& d = member(w, "died_after_look");
  if (!d.is_object()) return "";
  return field(d, "how", "killed by a signal") + " " + format_seconds(number(d, "after_s")) +
         " after forkcheck " + field(d, "what", "looked at it") +
         ": forkcheck may have caused it, so it is not said to be the program's own crash";
}

std::string tree_facts(const json& v) {
  const json& watchdog = member(v, "watchdog");
  const json& tree = member(watchdog, "tree");
  if (!tree.is_object()) return "";
  const std::string state = field(tree, "state", "unknown");
  std::string line;
  if (state == "blocked") {
    line = "blocked";
    if (member(tree, "still_s").is_number())
      line += " for " + format_tenths(number(tree, "still_s"));
  } else if (state == "sleeping") {
    line = "asleep: " + sleeping_text(member(tree, "sleep"));
  } else if (state == "working" || state == "starved") {
    // "at the deadline" only where one passed: a tree may be seen working when it ends by itself.
    const bool at_deadline =
        field(v, "outcome") == "timeout" || is_true(watchdog, "deadline_passed");
    line = state == "starved" ? "starved (wanting a CPU, getting next to none)"
           : at_deadline      ? "still working at the deadline"
                              : "working when last looked at";
  } else {
    line = "state of the tree unknown";
  }
  std::vector<std::string> facts;
  if (member(tree, "cpu_s_in_window").is_number()) {
    std::string f = format_cpu(number(tree, "cpu_s_in_window")) + " of CPU";
    if (member(tree, "window_s").is_number())
      f += " in the last " + format_tenths(number(tree, "window_s"));
    facts.push_back(std::move(f));
  }
  if (const json& n = member(tree, "processes"); n.is_number())
    facts.push_back(counted(static_cast<std::size_t>(n.get<double>()), "process", "processes"));
  if (const json& n = member(tree, "threads"); n.is_number())
    facts.push_back(counted(static_cast<std::size_t>(n.get<double>()), "thread", "threads"));
  for (size_t i = 0; i < facts.size(); ++i) line += (i == 0 ? ": " : ", ") + facts[i];
  // What the threads were waiting in, from /proc: "futex (5), wait4 (2)".
  const std::string waits = field(tree, "waiting_in");
  if (!waits.empty()) line += (state == "blocked" ? " waiting in " : "; in ") + waits;
  return line;
}

}  // namespace fc::reports
