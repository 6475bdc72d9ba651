#include "reports/watch_view.h"

#include <set>

#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

constexpr size_t kCommandShown = 80;  // characters of a command line in a one-line message
constexpr size_t kFramesShown = 6;    // of a fork's backtrace

size_t count_at(const json* obj, const char* key) {
  if (obj == nullptr) return 0;
  auto it = obj->find(key);
  if (it == obj->end() || !it->is_number_integer() || it->get<long long>() < 0) return 0;
  return static_cast<size_t>(it->get<long long>());
}

std::string hazard_title(const json& h) {
  const std::string kind = field(h, "kind", "?"), runtime = field(h, "runtime");
  return runtime.empty() || kind == "cuda" ? kind : kind + " (" + runtime + ")";
}

bool fails(const json& fork) { return !list(fork, "hazards").empty() && !is_true(fork, "allowed"); }

std::string end_text(const json& end) {
  const std::string how = field(end, "how", "unknown");
  if (how == "exited") return end.contains("code") ? "exited " + field(end, "code") : "exited";
  if (how == "killed") return "killed by " + field(end, "signal_name", "a signal");
  return "end unknown";
}

}  // namespace

const json* watch_details(const json& variant) {
  const json* details = object_at(variant, "details");
  return details ? object_at(*details, "watch") : nullptr;
}

size_t watch_failing(const json& variant) {
  const json* w = watch_details(variant);
  return w ? count_at(object_at(*w, "totals"), "failing") : 0;
}

const json& watch_findings(const json& variant) {
  static const json none = json::array();
  const json* w = watch_details(variant);
  return w ? list(*w, "findings") : none;
}

std::string watch_failure(const json& variant) {
  const size_t failing = watch_failing(variant);
  if (failing == 0) return "";
  std::string kinds;
  for (const auto& f : watch_findings(variant))
    if (!is_true(f, "allowed"))
      kinds += (kinds.empty() ? "" : ", ") + field(f, "title", field(f, "kind", "?")) + " (" +
               finding_forks(f) + ")";
  return counted(failing, "hazardous fork", "hazardous forks") +
         (kinds.empty() ? "" : ": " + kinds);
}

std::vector<WatchRun> watch_runs(const json& report) {
  std::vector<WatchRun> runs;
  for (const auto& c : list(report, "cases"))
    for (const auto& v : list(c, "variants"))
      if (watch_details(v)) runs.push_back({&c, &v});
  return runs;
}

bool any_watch_failing(const json& report) {
  for (const auto& run : watch_runs(report))
    if (watch_failing(*run.variant) > 0) return true;
  return false;
}

std::vector<const json*> hazardous_forks(const json& variant) {
  std::vector<const json*> out;
  const json* details = object_at(variant, "details");
  if (!details) return out;
  for (const auto& f : list(*details, "forks"))
    if (!list(f, "hazards").empty()) out.push_back(&f);
  return out;
}

size_t unlisted_failing(const json& variant) {
  size_t listed = 0;
  for (const json* f : hazardous_forks(variant)) listed += fails(*f) ? 1 : 0;
  const size_t failing = watch_failing(variant);
  return failing > listed ? failing - listed : 0;
}

std::string fork_hazard_titles(const json& fork, bool allowed) {
  std::string out;
  for (const auto& h : list(fork, "hazards"))
    if (is_true(h, "allowed") == allowed) out += (out.empty() ? "" : ", ") + hazard_title(h);
  return out;
}

std::string fork_line(const json& fork) {
  std::string s = "fork " + field(fork, "index", "?") + ": pid " + field(fork, "pid", "?") + " (" +
                  shorten(field(fork, "command"), kCommandShown) + ") -> child " +
                  field(fork, "child", "?") + ", ";
  if (is_true(fork, "exec"))
    return s + "exec'd " + shorten(field(fork, "exec_path"), kCommandShown);
  return s + "no exec";
}

std::string fork_failure_message(const json& fork) {
  if (!fails(fork)) {
    std::string flags;
    std::set<std::string> seen;
    for (const auto& h : list(fork, "hazards"))
      if (seen.insert(field(h, "kind")).second)
        flags += (flags.empty() ? "" : " ") + ("--allow " + field(h, "kind"));
    return "allowed hazardous fork (" + fork_hazard_titles(fork, true) + "; " + flags +
           "): " + fork_line(fork);
  }
  return "hazardous fork (" + fork_hazard_titles(fork, false) + "): " + fork_line(fork);
}

std::string fork_advice_text(const json& fork) {
  std::string text;
  for (const auto& h : list(fork, "hazards")) {
    text += "hazard " + hazard_title(h) +
            (is_true(h, "allowed") ? " [allowed: --allow " + field(h, "kind") + "]" : "") + ": " +
            field(h, "what") + "\n";
    if (!field(h, "why").empty()) text += "  why: " + field(h, "why") + "\n";
  }
  if (const json* t = object_at(fork, "thread"))
    text += "forking thread: " + field(*t, "tid", "?") + " \"" + field(*t, "name") + "\"" +
            (is_true(*t, "main") ? " (main)" : "") + ", " + field(fork, "threads", "?") +
            " threads alive\n";
  std::string frames;
  size_t n = 0;
  for (const auto& b : list(fork, "backtrace")) {
    if (n++ == kFramesShown) {
      frames += " < ...";
      break;
    }
    frames += (frames.empty() ? "" : " < ") + display(b);
  }
  if (!frames.empty()) text += "where: " + frames + "\n";
  if (const json* end = object_at(fork, "child_end")) text += "child: " + end_text(*end) + "\n";
  const json& advice = list(fork, "advice");
  if (!advice.empty()) {
    text += "fix:\n";
    for (const auto& a : advice) text += "  - " + display(a) + "\n";
  }
  return text;
}

std::string finding_forks(const json& finding) {
  const json& indices = list(finding, "fork_indices");
  std::string s;
  for (const auto& i : indices) s += (s.empty() ? "" : ", ") + display(i);
  const size_t forks = count_at(&finding, "forks");
  if (s.empty()) return counted(forks, "fork", "forks");
  s = (indices.size() == 1 ? "fork " : "forks ") + s;
  if (forks > indices.size()) s += " and " + std::to_string(forks - indices.size()) + " more";
  return s;
}

}  // namespace fc::reports
