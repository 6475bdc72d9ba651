// Stacks as the run log records them, whichever way they were taken: one object
// per thread, frames as text.
#include "harness/stacks/stacks.h"

#include <algorithm>
#include <map>
#include <utility>

namespace fc::harness {

nlohmann::json to_json(const Stacks& s) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& t : s.threads) {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : t.frames)
      frames.push_back(f.function + (f.where.empty() ? "" : " " + f.where));
    nlohmann::json thread = {{"pid", t.pid},     {"tid", t.tid},     {"name", t.name},
                             {"state", t.state}, {"wchan", t.wchan}, {"frames", frames}};
    if (!t.syscall.empty()) thread["syscall"] = t.syscall;
    if (!t.python.empty()) {
      nlohmann::json python = nlohmann::json::array();
      for (const auto& f : t.python) {
        nlohmann::json frame = {{"function", f.function}};
        if (!f.file.empty()) {
          frame["file"] = f.file;
          frame["line"] = f.line;
        }
        if (!f.code.empty()) frame["code"] = f.code;
        python.push_back(std::move(frame));
      }
      thread["python"] = std::move(python);
    }
    threads.push_back(std::move(thread));
  }
  return threads;
}

std::string waiting_in(const std::vector<ThreadStack>& threads) {
  std::map<std::string, int> counts;
  for (const auto& t : threads) {
    std::string what = !t.syscall.empty()                 ? t.syscall
                       : !t.wchan.empty()                 ? t.wchan
                       : t.state == "R"                   ? "running"
                       : t.state == "T" || t.state == "t" ? "stopped"
                       : t.state == "D"                   ? "disk wait"
                                                          : "";
    if (!what.empty()) ++counts[what];
  }
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [what, n] : sorted)
    out += (out.empty() ? "" : ", ") + what + " (" + std::to_string(n) + ")";
  return out;
}

}  // namespace fc::harness
