#include "harness/supervise/classify.h"

#include <cstdio>

#include "reports/text.h"
#include "reports/watchdog_text.h"

namespace fc::harness {
namespace {

using reports::counted;
using reports::format_cpu;
using reports::format_tenths;

// "0.4 ms of CPU in the last 1.0 s; 3 processes, 7 threads waiting in futex (5), wait4 (2)"
std::string tree_line(const TreeFacts& t) {
  std::string s = format_cpu(t.cpu_s_in_window) + " of CPU in the last " +
                  format_tenths(t.window_s) + "; " + counted(t.processes, "process", "processes") +
                  ", " + counted(t.threads, "thread", "threads");
  if (!t.waiting_in.empty()) s += (t.blocked ? " waiting in " : ": ") + t.waiting_in;
  return s;
}

std::string stuck_line(const ProcessStall& p) {
  return reports::stuck_process_text(p.pid, p.name, p.threads, p.stuck_s, p.pause);
}

std::string rest_line(const ProcessStall& p) {
  return reports::rest_of_tree_text(p.rest_still, p.rest_cpu_share);
}

std::string escalation(const ChildResult& r) {
#ifdef _WIN32
  // No signals on Windows: the polite request is Ctrl-Break, the end TerminateJobObject.
  if (r.sent_sigkill && r.sent_sigterm)
    return "; Ctrl-Break was not enough, its job object was terminated";
  if (r.sent_sigkill) return "; its job object was terminated";
  if (r.sent_sigterm) return "; Ctrl-Break ended it";
#else
  if (r.sent_sigkill) return "; SIGTERM was not enough, SIGKILL ended it";
  if (r.sent_sigterm) return "; SIGTERM ended it";
#endif
  return "";
}

// Why time was called, for a child that was then ended by forkcheck.
std::string called_because(const ChildResult& r) {
  const TreeFacts& t = r.tree;
  const std::string stuck = r.stuck ? "; " + stuck_line(*r.stuck) : "";
  if (r.step_hang) {
    const auto& h = *r.step_hang;
    const std::string still = t.blocked || !r.stuck
                                  ? ", the whole tree blocked for " + format_tenths(t.still_s)
                                  : ", " + stuck_line(*r.stuck) + ", while " + rest_line(*r.stuck);
    return "pid " + std::to_string(h.pid) + " entered \"" + h.step +
           "\" and did not come back within " + format_tenths(h.within_s) + still + " (" +
           tree_line(t) + "; called after " + format_tenths(h.waited_s) + ")" +
           (t.blocked ? stuck : "");
  }
  if (r.still_too_long)
    return "the whole tree had been still for " + format_tenths(t.still_s) + ", past the " +
           format_tenths(r.hang_after_s) + " a stall may last (--hang-after) (" + tree_line(t) +
           "; called after " + format_tenths(r.called_after_s) + ")" + stuck;
  if (r.stuck_too_long && r.stuck)
    return stuck_line(*r.stuck) + ", past the " + format_tenths(r.hang_after_s) +
           " a stall may last (--hang-after); " + rest_line(*r.stuck) + " (called after " +
           format_tenths(r.called_after_s) + ")";
  if (t.blocked)
    return "blocked when its " + format_tenths(r.timeout_s) +
           " deadline passed: the whole tree had been still for " + format_tenths(t.still_s) +
           " (" + tree_line(t) + ")" + stuck;
  if (r.stuck)
    return "blocked in part when its " + format_tenths(r.timeout_s) +
           " deadline passed: " + stuck_line(*r.stuck) + ", while " + rest_line(*r.stuck) +
           ": a partial deadlock (" + tree_line(t) + ")";
  if (t.starved)
    return "starved when its " + format_tenths(r.timeout_s) +
           " deadline passed: " + reports::starved_text(t.starved_s, -1, 0) + " (" + tree_line(t) +
           "): a timeout, not a hang";
  return "still working when its " + format_tenths(r.timeout_s) + " deadline passed (" +
         tree_line(t) + "): a timeout, not a hang";
}

// For a child that ended by itself after time was called, before forkcheck signalled it.
std::string ended_by_itself(const ChildResult& r) {
  const std::string what = r.step_hang || r.still_too_long || r.stuck_too_long
                               ? "a stall was called on it"
                               : "its " + format_tenths(r.timeout_s) + " deadline had passed";
  return " (" + what + ", but it ended by itself " +
         format_tenths(r.duration_s - r.called_after_s) + " later, before forkcheck signalled it)";
}

// What the report must not hide: processes of the tree that outlived every SIGKILL, and strangers
// that had joined its process group (spared: it was not signalled as a whole).
std::string survivors(const ChildResult& r) {
  auto pids = [](const std::vector<int>& v) {
    std::string s;
    for (int p : v) s += (s.empty() ? "" : ", ") + std::to_string(p);
    return s;
  };
  std::string out;
  if (!r.leftovers_surviving.empty())
    out += "; still alive after every SIGKILL: pid " + pids(r.leftovers_surviving);
  if (!r.group_strangers.empty())
    out += "; pid " + pids(r.group_strangers) +
           " joined its process group from outside its tree and was spared (the group was not "
           "signalled as a whole)";
  return out;
}

}  // namespace

bool time_was_called(const ChildResult& r) {
  return r.step_hang || r.deadline_passed || r.still_too_long || r.stuck_too_long ||
         !r.failing_at_start.empty();
}

bool exited_by_itself(const ChildResult& r) {
  return r.started && time_was_called(r) && !r.sent_sigterm && !r.sent_sigkill &&
         r.interrupted_by == 0;
}

Classified classify(const ChildResult& r, bool expect_result) {
  Classified c;
  c.details = r.early_details;
  if (r.result) {
    const auto& d = r.result->value("details", nlohmann::json::object());
    if (d.is_object()) c.details.update(d);
  }
  if (!r.started) {
    c.message = r.start_error;
    c.harness_error = true;
    return c;
  }
  // Ended by forkcheck because its processes kept failing at start: an error, said as such.
  if (!r.failing_at_start.empty() && (r.sent_sigterm || r.sent_sigkill)) {
    c.outcome = Outcome::kError;
    c.message = r.failing_at_start + escalation(r) + survivors(r);
    c.details["ended_by_forkcheck"] = "its processes kept failing at start";
    return c;
  }
  // Ended by forkcheck: what the tree was doing when time was called is the outcome.
  if (time_was_called(r) && (r.sent_sigterm || r.sent_sigkill)) {
    c.outcome = r.step_hang || r.still_too_long || r.stuck_too_long || r.tree.blocked || r.stuck
                    ? Outcome::kHang
                    : Outcome::kTimeout;
    c.message = called_because(r) + escalation(r) + survivors(r);
    if (r.bad_channel_lines > 0)
      c.message += "; its channel also carried a line that is not a forkcheck message (" +
                   r.bad_channel_why + ")";
    return c;
  }
  // Otherwise the child's own end: it exited, or died of a signal that was not ours.
  std::string note = exited_by_itself(r) ? ended_by_itself(r) : "";
  note += survivors(r);
  if (r.exit.signal != 0) {
    c.outcome = Outcome::kCrash;
    c.message = r.exit.describe();
    std::string tail = r.err.last_lines(3);
    if (!tail.empty()) c.message += "; last output: " + tail;
    c.message += note;
    return c;
  }
  if (r.bad_channel_lines > 0) {
    c.outcome = Outcome::kProtocolError;
    c.message = "it sent " +
                (r.bad_channel_lines == 1 ? std::string("a line")
                                          : std::to_string(r.bad_channel_lines) + " lines") +
                " on its channel that " + (r.bad_channel_lines == 1 ? "is" : "are") +
                " not a forkcheck message; the first: " + r.bad_channel_why + ": " +
                r.bad_channel_line + " (" + r.exit.describe() + ")" + note;
    c.harness_error = expect_result;  // a repro program that speaks nonsense is a bug
    return c;
  }
  if (r.result) {
    const std::string said = r.result->value("outcome", "");
    auto o = parse_outcome(said);
    c.message = r.result->value("message", "");
    if (!o) {
      c.outcome = Outcome::kProtocolError;
      c.message = "the case sent an outcome forkcheck does not know: \"" + said + "\"" + note;
      c.harness_error = true;
      return c;
    }
    c.outcome = *o;
    const auto failure = c.details.find("case_failure");
    c.harness_error = failure != c.details.end() && failure->is_boolean() && failure->get<bool>();
    if (r.exit.code != 0) {
      c.outcome = Outcome::kError;
      c.message = "the case reported " + std::string(to_string(*o)) + " but exited with " +
                  r.exit.describe();
    }
    c.message += note;
    return c;
  }
  if (r.exit.code != 0) {
    c.outcome = Outcome::kError;
    std::string tail = r.err.last_lines(3);
    c.message = (tail.empty() ? r.exit.describe() : tail + " (" + r.exit.describe() + ")") + note;
    c.harness_error = expect_result;  // a repro program that dies without a result is a bug
    return c;
  }
  if (expect_result) {
    c.outcome = Outcome::kError;
    c.message = "the repro program exited 0 without sending a result" + note;
    c.harness_error = true;
    return c;
  }
  c.outcome = Outcome::kOk;
  c.message = "exited 0" + note;
  return c;
}

}  // namespace fc::harness
