#include "harness/watch/watch_summary.h"

#include <cstdio>
#include <set>

#include "harness/console/console_style.h"
#include "harness/watch/fork_hazards.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;
using reports::shorten;

constexpr size_t kShownHazardous = 20;
constexpr size_t kShownSafe = 20;

std::string end_text(const json& end) {
  const std::string how = end.value("how", "unknown");
  if (how == "exited")
    return end.contains("code") ? "exited " + std::to_string(end.value("code", 0)) : "exited";
  if (how == "killed")
    return "killed by " + end.value("signal_name", "a signal") +
           (end.value("core", false) ? " (core dumped)" : "");
  return "end unknown";
}

std::string heading(const json& f, size_t index) {
  char at[32] = "";
  if (f["at_s"].is_number()) std::snprintf(at, sizeof at, " at %.2f s", f["at_s"].get<double>());
  std::string s = "fork " + std::to_string(index) + at + ": pid " +
                  std::to_string(f.value("pid", 0)) + " (" + shorten(f.value("command", ""), 60) +
                  ") -> child " + std::to_string(f.value("child", 0)) + ", ";
  if (f.value("exec", false)) {
    s += "exec'd " + shorten(f.value("exec_path", ""), 60);
    if (f.contains("exec_error")) s += " (failed: " + f.value("exec_error", "") + ")";
  } else {
    s += "no exec";
  }
  return s + ", " + end_text(f.value("child_end", json::object()));
}

std::string safe_reason(const json& f) {
  if (f.value("exec", false)) return "it exec'd";
  return f.value("threads", 0) <= 1 ? "single-threaded" : "no hazard";
}

void hazardous(std::string& out, const json& f, size_t index) {
  out += (f.value("allowed", false) ? "ALLOWED " : "HAZARD  ") + heading(f, index) + "\n";
  const char* label = "  why:     ";
  for (const auto& h : f["hazards"]) {
    out += label + h.value("what", "") +
           (h.value("allowed", false) ? " [allowed: --allow " + h.value("kind", "") + "]" : "") +
           "\n";
    out += "             " + h.value("why", "") + "\n";
    label = "           ";
  }
  const auto& t = f["thread"];
  out += "  threads: " + std::to_string(f.value("threads", 0)) + " alive; forking thread " +
         std::to_string(t.value("tid", 0)) + " \"" + t.value("name", "") + "\"" +
         (t.value("main", false) ? " (main)" : "") + "\n";
  std::string frames;
  size_t n = 0;
  for (const auto& b : f.value("backtrace", json::array())) {
    if (n++ == 4) break;
    frames += (frames.empty() ? "" : " < ") + b.get<std::string>();
  }
  if (!frames.empty()) out += "  where:   " + frames + "\n";
  // The Python calls that forked, outermost first (the bootstrap's fork event), when told.
  std::string calls;
  const json stack = python_stack_of(f);
  n = 0;
  for (const auto& frame : stack.is_array() ? stack : json::array()) {
    if (n++ == 5) {
      calls += " > ...";
      break;
    }
    calls += (calls.empty() ? "" : " > ") +
             reports::python_frame_text(reports::read_as<reports::PythonFrame>(frame));
  }
  if (!calls.empty()) out += "  python:  " + calls + "\n";
  label = "  instead: ";
  for (const auto& a : fork_advice(f["hazards"], python_stack_of(f))) {
    out += label + a + "\n";
    label = "           ";
  }
}

}  // namespace

std::string watch_headline(const json& totals) {
  std::string s =
      "watch: " + reports::counted(totals.value("forks", std::size_t{0}), "fork", "forks") + ", " +
      std::to_string(totals.value("hazardous", 0)) + " hazardous";
  std::string names;
  for (const auto& r : totals.value("runtimes", json::array()))
    names += (names.empty() ? "" : ", ") + r.get<std::string>();
  if (!names.empty()) s += " (" + names + ")";
  if (totals.value("allowed", 0) > 0)
    s += ", " + std::to_string(totals.value("allowed", 0)) + " of them allowed";
  return s;
}

std::string watch_judgement(const json& totals, const json& findings, int exit_status,
                            const std::string& program_failure) {
  const size_t failing = totals.value("failing", size_t{0});
  const size_t allowed = totals.value("allowed", size_t{0});
  std::string failing_kinds, allowed_kinds, allow_flags;
  std::set<std::string> seen_allowed, seen_failing;
  for (const auto& f : findings) {
    const std::string kind = f.value("kind", "");
    if (f.value("allowed", false)) {
      if (seen_allowed.insert(kind).second)
        allowed_kinds += (allowed_kinds.empty() ? "" : ", ") + kind;
    } else {
      failing_kinds += (failing_kinds.empty() ? "" : ", ") + f.value("title", kind);
      if (seen_failing.insert(kind).second)
        allow_flags += (allow_flags.empty() ? "" : " ") + ("--allow " + kind);
    }
  }
  const std::string status = " (exit status " + std::to_string(exit_status) + ")";
  const std::string forks = reports::counted(failing, "hazardous fork", "hazardous forks");
  // The verdict word is painted after the text is escaped: escaping would show the colour's
  // escape sequence as text.
  const std::string head = "\nforkcheck watch: ";
  if (!program_failure.empty()) {
    std::string rest = ": the program failed (" + program_failure + ")" + status;
    if (failing > 0) rest += "; it also made " + forks + " (" + failing_kinds + ")";
    return head + paint(Style::kBad, "FAILED") + reports::terminal_safe(rest + "\n");
  }
  if (failing > 0) {
    std::string rest = ": " + forks + " (" + failing_kinds + ")" + status + "\n";
    rest += "  the fix for each is above and in the reports; to accept a kind knowingly: " +
            allow_flags;
    return head + paint(Style::kBad, "FAILED") + reports::terminal_safe(rest + "\n");
  }
  if (allowed > 0)
    return head + paint(Style::kGood, "ok") +
           reports::terminal_safe(
               ": " + reports::counted(allowed, "hazardous fork", "hazardous forks") +
               ", every one of a kind allowed (" + allowed_kinds + ")" + status + "\n");
  return head + paint(Style::kGood, "ok") + ": no hazardous fork" + status + "\n";
}

std::string watch_summary(const json& forks, const json& totals) {
  std::string out = "\nforkcheck " + watch_headline(totals) + ", " +
                    std::to_string(totals.value("safe", 0)) + " safe (" +
                    std::to_string(totals.value("exec", 0)) + " exec'd)\n";
  size_t shown_h = 0, shown_s = 0, more = 0, index = 0;
  for (const auto& f : forks) {
    ++index;
    if (!f["hazards"].empty()) {
      if (shown_h++ < kShownHazardous)
        hazardous(out, f, index);
      else
        ++more;
    } else if (shown_s++ < kShownSafe) {
      out += "safe    " + heading(f, index) + " (" + safe_reason(f) + ")\n";
    } else {
      ++more;
    }
  }
  if (more > 0) out += "... and " + std::to_string(more) + " more forks in report.json\n";
  // For the terminal: command lines, paths, thread names and frames are the watched program's.
  return reports::terminal_safe(out);
}

}  // namespace fc::harness
