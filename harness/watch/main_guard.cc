#include "harness/watch/main_guard.h"

#include <regex>
#include <vector>

#include "harness/watch/python_source.h"

namespace fc::harness {
namespace {

using python_source::blank_or_comment;
using python_source::indent;
using python_source::is_main_guard;

// A top-level compound statement that is not the guard: what encloses the line runs on import.
bool is_other_block(const std::string& s) {
  static const std::regex block(R"re(^(if|for|while|with|try|async\s+(for|with))\b.*:)re");
  return std::regex_search(s, block) && !is_main_guard(s);
}

}  // namespace

StartSite start_site(const nlohmann::json& stack) {
  StartSite site;
  if (!stack.is_array() || stack.empty() || !stack[0].is_object()) return site;
  const auto& outer = stack[0];
  if (outer.value("function", "") != "<module>") return site;
  site.file = outer.value("file", "");
  site.line = outer.value("line", 0);
  const std::vector<std::string> lines = python_source::read_lines(site.file);
  if (site.line < 1 || static_cast<std::size_t>(site.line) > lines.size()) return site;
  const std::string& at = lines[static_cast<std::size_t>(site.line) - 1];
  if (blank_or_comment(at)) return site;  // not the source that ran
  if (indent(at) == 0) {
    // A top-level statement: the guard's own line (`if __name__ == "__main__": main()`), or
    // code that runs on every import.
    site.guard = is_main_guard(at) ? StartSite::Guard::kGuarded : StartSite::Guard::kUnguarded;
    return site;
  }
  // Indented: inside the top-level statement that began on the nearest line above at column 0.
  for (auto i = static_cast<std::size_t>(site.line) - 1; i-- > 0;) {
    const std::string& l = lines[i];
    if (blank_or_comment(l) || indent(l) != 0) continue;
    if (is_main_guard(l))
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
