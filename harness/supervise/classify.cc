#include "harness/supervise/classify.h"

#include "harness/supervise/watchdog_record.h"
#include "reports/model/report_model_json.h"
#include "reports/watchdog_text.h"

namespace fc::harness {

namespace {

// The step that stalled, as the run log records it (reports/ words it from that record).
std::optional<reports::StepHang> step_hang(const ChildResult& r) {
  if (!r.step_hang) return std::nullopt;
  return reports::read_as<reports::StepHang>(step_hang_record(r));
}

}  // namespace

bool time_was_called(const ChildResult& r) { return r.called_for != TimeCalled::kNo; }

bool called_a_hang(const ChildResult& r) {
  return time_was_called(r) &&
         (r.called_for == TimeCalled::kStep || r.called_for == TimeCalled::kStall ||
          r.called_for == TimeCalled::kStuck || r.tree.blocked || r.stuck);
}

bool exited_by_itself(const ChildResult& r) {
  return r.started && time_was_called(r) && !r.sent_sigterm && !r.sent_sigkill &&
         r.interrupted_by == 0;
}

Classified classify(const ChildResult& r, bool expect_result) {
  Classified c;
  c.details = r.early_details;
  // The facts the run log records, phrased by reports/ (watchdog_text.h): said once, there.
  c.watchdog = watchdog_record(r);
  const nlohmann::json& record = c.watchdog;
  const auto watchdog = reports::read_as<reports::Watchdog>(record);
  const std::string ending = reports::escalation_text(watchdog) + reports::survivors_text(watchdog);
  if (r.result) {
    const auto& d = r.result->value("details", nlohmann::json::object());
    if (d.is_object()) c.details.update(d);
  }
  if (!r.started) {
    c.message = r.start_error;
    c.harness_error = true;
    return c;
  }
  // A process forkcheck attached to: hung by the rule exec's outcome follows, else nothing wrong
  // was seen (it worked, or ended: its exit status is its parent's). Killed only on request
  // (--kill-on-hang), and then said as exec says it.
  if (r.attached && !r.sent_sigterm && !r.sent_sigkill) {
    const bool hung = called_a_hang(r);
    c.outcome = hung ? Outcome::kHang : Outcome::kOk;
    c.message = reports::attached_text(watchdog, step_hang(r), hung);
    return c;
  }
  // Ended by forkcheck because its processes kept failing at start: an error, said as such.
  if (!r.failing_at_start.empty() && (r.sent_sigterm || r.sent_sigkill)) {
    c.outcome = Outcome::kError;
    c.message = r.failing_at_start + ending;
    c.details["ended_by_forkcheck"] = "its processes kept failing at start";
    return c;
  }
  // Ended by forkcheck: what the tree was doing when time was called is the outcome.
  if (time_was_called(r) && (r.sent_sigterm || r.sent_sigkill)) {
    c.outcome = called_a_hang(r) ? Outcome::kHang : Outcome::kTimeout;
    c.message = reports::time_called_text(watchdog, step_hang(r)) + ending;
    if (r.bad_channel_lines > 0)
      c.message += "; its channel also carried a line that is not a forkcheck message (" +
                   r.bad_channel_why + ")";
    return c;
  }
  // Otherwise the child's own end: it exited, or died of a signal that was not ours.
  const std::string note =
      reports::ended_by_itself_text(watchdog) + reports::survivors_text(watchdog);
  // Dead of a signal just after forkcheck signalled it to look at it: never said to be the
  // program's own crash, since forkcheck's look may have caused it.
  if (watchdog.died_after_look) {
    c.outcome = Outcome::kError;
    c.harness_error = true;
    c.message = reports::died_after_look_text(watchdog);
    std::string tail = r.err.last_lines(3);
    if (!tail.empty()) c.message += "; last output: " + tail;
    c.details["died_after_look"] = record["died_after_look"];
    return c;
  }
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
