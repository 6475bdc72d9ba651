#include "harness/supervise/classify.h"

#include <cstdio>

namespace fc::harness {
namespace {

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string escalation(const ChildResult& r) {
#ifdef _WIN32
  // No signals on Windows: the polite request is Ctrl-Break, the end TerminateJobObject.
  if (r.sent_sigkill && r.sent_sigterm) return "; Ctrl-Break was not enough, its job object was terminated";
  if (r.sent_sigkill) return "; its job object was terminated";
  if (r.sent_sigterm) return "; Ctrl-Break ended it";
#else
  if (r.sent_sigkill) return "; SIGTERM was not enough, SIGKILL ended it";
  if (r.sent_sigterm) return "; SIGTERM ended it";
#endif
  return "";
}

}  // namespace

Classified classify(const ChildResult& r, bool expect_result) {
  Classified c;
  c.details = r.early_details;
  if (r.result) c.details.update(r.result->value("details", nlohmann::json::object()));
  if (!r.started) {
    c.message = r.start_error;
    c.harness_error = true;
    return c;
  }
  if (r.step_hang) {
    const auto& h = *r.step_hang;
    c.outcome = Outcome::kHang;
    c.message = "pid " + std::to_string(h.pid) + " entered \"" + h.step +
                "\" and did not come back within " + fmt_s(h.within_s) +
                ", using no CPU (hung after " + fmt_s(h.waited_s) + ")" + escalation(r);
    return c;
  }
  if (r.deadline_passed) {
    c.outcome = Outcome::kHang;
    c.message = "did not finish within the " + fmt_s(r.timeout_s) + " deadline" + escalation(r);
    return c;
  }
  if (r.exit.signal != 0) {
    c.outcome = Outcome::kCrash;
    c.message = r.exit.describe();
    std::string tail = r.err.last_lines(3);
    if (!tail.empty()) c.message += "; last output: " + tail;
    return c;
  }
  if (r.result) {
    auto o = parse_outcome(r.result->value("outcome", ""));
    c.message = r.result->value("message", "");
    if (!o) {
      c.message = "the case sent an unknown outcome: " + r.result->value("outcome", "");
      c.harness_error = true;
      return c;
    }
    c.outcome = *o;
    c.harness_error = c.details.value("case_failure", false);
    if (r.exit.code != 0) {
      c.outcome = Outcome::kError;
      c.message = "the case reported " + std::string(to_string(*o)) + " but exited with " +
                  r.exit.describe();
    }
    return c;
  }
  if (r.exit.code != 0) {
    c.outcome = Outcome::kError;
    std::string tail = r.err.last_lines(3);
    c.message = tail.empty() ? r.exit.describe() : tail + " (" + r.exit.describe() + ")";
    c.harness_error = expect_result;  // a repro program that dies without a result is a bug
    return c;
  }
  if (expect_result) {
    c.outcome = Outcome::kError;
    c.message = "the repro program exited 0 without sending a result";
    c.harness_error = true;
    return c;
  }
  c.outcome = Outcome::kOk;
  c.message = "exited 0";
  return c;
}

}  // namespace fc::harness
