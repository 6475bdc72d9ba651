#include "reports/watch_view.h"

#include <set>

#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

constexpr size_t kCommandShown = 80;  // characters of a command line in a one-line message
constexpr size_t kFramesShown = 6;    // of a fork's backtrace

size_t count(int n) { return n > 0 ? static_cast<size_t>(n) : 0; }

std::string hazard_title(const ForkHazard& h) {
  const std::string kind = h.kind.empty() ? "?" : h.kind;
  return h.runtime.empty() || kind == "cuda" ? kind : kind + " (" + h.runtime + ")";
}

bool fails(const ForkEvent& fork) { return !fork.hazards.empty() && !fork.allowed; }

std::string end_text(const ChildEnd& end) {
  if (end.how == "exited") return end.code ? "exited " + std::to_string(*end.code) : "exited";
  if (end.how == "killed")
    return "killed by " + (end.signal_name.empty() ? std::string("a signal") : end.signal_name);
  return "end unknown";
}

}  // namespace

const WatchSummary* watch_details(const Variant& variant) {
  return variant.watch ? &*variant.watch : nullptr;
}

size_t watch_failing(const Variant& variant) {
  return variant.watch ? count(variant.watch->totals.failing) : 0;
}

const std::vector<WatchFinding>& watch_findings(const Variant& variant) {
  static const std::vector<WatchFinding> none;
  return variant.watch ? variant.watch->findings : none;
}

std::string watch_failure(const Variant& variant) {
  const size_t failing = watch_failing(variant);
  if (failing == 0) return "";
  std::string kinds;
  for (const WatchFinding& f : watch_findings(variant))
    if (!f.allowed)
      kinds += (kinds.empty() ? "" : ", ") +
               (!f.title.empty()  ? f.title
                : !f.kind.empty() ? f.kind
                                  : std::string("?")) +
               " (" + finding_forks(f) + ")";
  return counted(failing, "hazardous fork", "hazardous forks") +
         (kinds.empty() ? "" : ": " + kinds);
}

std::vector<WatchRun> watch_runs(const Report& report) {
  std::vector<WatchRun> runs;
  for (const Case& c : report.cases)
    for (const Variant& v : c.variants)
      if (watch_details(v)) runs.push_back({&c, &v});
  return runs;
}

bool any_watch_failing(const Report& report) {
  for (const auto& run : watch_runs(report))
    if (watch_failing(*run.variant) > 0) return true;
  return false;
}

std::vector<const ForkEvent*> hazardous_forks(const Variant& variant) {
  std::vector<const ForkEvent*> out;
  for (const ForkEvent& f : variant.forks)
    if (!f.hazards.empty()) out.push_back(&f);
  return out;
}

size_t unlisted_failing(const Variant& variant) {
  size_t listed = 0;
  for (const ForkEvent* f : hazardous_forks(variant)) listed += fails(*f) ? 1 : 0;
  const size_t failing = watch_failing(variant);
  return failing > listed ? failing - listed : 0;
}

std::string fork_hazard_titles(const ForkEvent& fork, bool allowed) {
  std::string out;
  for (const ForkHazard& h : fork.hazards)
    if (h.allowed == allowed) out += (out.empty() ? "" : ", ") + hazard_title(h);
  return out;
}

std::string fork_line(const ForkEvent& fork) {
  std::string s = "fork " + std::to_string(fork.index) + ": pid " + std::to_string(fork.pid) +
                  " (" + shorten(fork.command, kCommandShown) + ") -> child " +
                  std::to_string(fork.child) + ", ";
  if (fork.exec) return s + "exec'd " + shorten(fork.exec_path, kCommandShown);
  return s + "no exec";
}

std::string fork_failure_message(const ForkEvent& fork) {
  if (!fails(fork)) {
    std::string flags;
    std::set<std::string> seen;
    for (const ForkHazard& h : fork.hazards)
      if (seen.insert(h.kind).second) flags += (flags.empty() ? "" : " ") + ("--allow " + h.kind);
    return "allowed hazardous fork (" + fork_hazard_titles(fork, true) + "; " + flags +
           "): " + fork_line(fork);
  }
  return "hazardous fork (" + fork_hazard_titles(fork, false) + "): " + fork_line(fork);
}

std::string fork_advice_text(const ForkEvent& fork) {
  std::string text;
  for (const ForkHazard& h : fork.hazards) {
    text += "hazard " + hazard_title(h) + (h.allowed ? " [allowed: --allow " + h.kind + "]" : "") +
            ": " + h.what + "\n";
    if (!h.why.empty()) text += "  why: " + h.why + "\n";
  }
  if (fork.thread)
    text += "forking thread: " + std::to_string(fork.thread->tid) + " \"" + fork.thread->name +
            "\"" + (fork.thread->main ? " (main)" : "") + ", " + std::to_string(fork.threads) +
            " threads alive\n";
  std::string frames;
  size_t n = 0;
  for (const std::string& b : fork.backtrace) {
    if (n++ == kFramesShown) {
      frames += " < ...";
      break;
    }
    frames += (frames.empty() ? "" : " < ") + b;
  }
  if (!frames.empty()) text += "where: " + frames + "\n";
  if (fork.child_end) text += "child: " + end_text(*fork.child_end) + "\n";
  if (!fork.advice.empty()) {
    text += "fix:\n";
    for (const std::string& a : fork.advice) text += "  - " + a + "\n";
  }
  return text;
}

std::string finding_forks(const WatchFinding& finding) {
  const std::vector<int>& indices = finding.fork_indices;
  std::string s;
  for (const int i : indices) s += (s.empty() ? "" : ", ") + std::to_string(i);
  const size_t forks = count(finding.forks);
  if (s.empty()) return counted(forks, "fork", "forks");
  s = (indices.size() == 1 ? "fork " : "forks ") + s;
  if (forks > indices.size()) s += " and " + std::to_string(forks - indices.size()) + " more";
  return s;
}

}  // namespace fc::reports
