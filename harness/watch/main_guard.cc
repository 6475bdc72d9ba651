#include "harness/watch/main_guard.h"

#include <fstream>
#include <regex>
#include <vector>

namespace fc::harness {
namespace {

std::size_t indent(const std::string& s) { return s.find_first_not_of(" \t"); }

bool blank_or_comment(const std::string& s) {
  const auto i = indent(s);
  return i == std::string::npos || s[i] == '#';
}

bool is_guard(const std::string& s) {
  static const std::regex guard(
      R"re(^if\s+\(?\s*(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*\)?\s*:)re");
  return std::regex_search(s, guard);
}

// A top-level compound statement that is not the guard: what encloses the line runs on import.
bool is_other_block(const std::string& s) {
  static const std::regex block(R"re(^(if|for|while|with|try|async\s+(for|with))\b.*:)re");
  return std::regex_search(s, block) && !is_guard(s);
}

}  // namespace

StartSite start_site(const nlohmann::json& stack) {
  StartSite site;
  if (!stack.is_array() || stack.empty() || !stack[0].is_object()) return site;
  const auto& outer = stack[0];
  if (outer.value("function", "") != "<module>") return site;
  site.file = outer.value("file", "");
  site.line = outer.value("line", 0);
  std::ifstream in(site.file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (site.line < 1 || static_cast<std::size_t>(site.line) > lines.size()) return site;
  const std::string& at = lines[static_cast<std::size_t>(site.line) - 1];
  if (blank_or_comment(at)) return site;  // not the source that ran
  if (indent(at) == 0) {
    // A top-level statement: the guard's own line (`if __name__ == "__main__": main()`), or
    // code that runs on every import.
    site.guard = is_guard(at) ? StartSite::Guard::kGuarded : StartSite::Guard::kUnguarded;
    return site;
  }
  // Indented: inside the top-level statement that began on the nearest line above at column 0.
  for (auto i = static_cast<std::size_t>(site.line) - 1; i-- > 0;) {
    const std::string& l = lines[i];
    if (blank_or_comment(l) || indent(l) != 0) continue;
    if (is_guard(l))
      site.guard = StartSite::Guard::kGuarded;
    else if (is_other_block(l))
      site.guard = StartSite::Guard::kUnguarded;
    return site;  // else (a continued expression, an else:): not sure
  }
  return site;
}

nlohmann::json fork_guards(const nlohmann::json& python_facts) {
  nlohmann::json out = nlohmann::json::array();
  if (!python_facts.is_object() || !python_facts.contains("processes")) return out;
  for (const auto& p : python_facts["processes"]) {
    if (!p.is_object() || !p.contains("forks") || !p["forks"].is_array()) continue;
    for (const auto& f : p["forks"]) {
      if (!f.is_object() || !f.contains("threads") || !f["threads"].is_array() ||
          f["threads"].empty())
        continue;
      const StartSite site = start_site(f.value("stack", nlohmann::json::array()));
      nlohmann::json guard = {{"pid", p.value("pid", 0)},
                              {"seq", f.value("seq", 0)},
                              {"guard", site.guard == StartSite::Guard::kGuarded     ? "guarded"
                                        : site.guard == StartSite::Guard::kUnguarded ? "unguarded"
                                                                                     : "unknown"},
                              {"file", site.file},
                              {"line", site.line}};
      if (f.contains("last_seq")) guard["last_seq"] = f["last_seq"];  // a folded entry
      out.push_back(std::move(guard));
    }
  }
  return out;
}

}  // namespace fc::harness
