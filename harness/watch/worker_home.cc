#include "harness/watch/worker_home.h"

#include <regex>
#include <set>

#include "harness/watch/main_guard.h"
#include "harness/watch/python_source.h"

namespace fc::harness {
namespace {

using python_source::blank_or_comment;
using python_source::indent;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The machinery between a worker process's start and the function it was given: multiprocessing's
// own (a Pool's worker loop), and concurrent.futures' (a ProcessPoolExecutor's).
bool multiprocessing_file(const std::string& file) {
  return file.find("/multiprocessing/") != std::string::npos ||
         file.find("/concurrent/futures/") != std::string::npos;
}

const char* home_name(WorkerHome::Where w) {
  switch (w) {
    case WorkerHome::Where::kTopLevel:
      return "module";
    case WorkerHome::Where::kUnderGuard:
      return "main-guard";
    case WorkerHome::Where::kNested:
      return "nested";
    case WorkerHome::Where::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace

WorkerHome worker_home(const std::vector<PyFrame>& python) {
  WorkerHome home;
  // Innermost first: process.py's run, then inward past multiprocessing's own frames.
  std::size_t run = python.size();
  for (std::size_t i = 0; i < python.size(); ++i)
    if (ends_with(python[i].file, "multiprocessing/process.py") && python[i].function == "run")
      run = i;
  if (run == python.size()) return home;
  const PyFrame* target = nullptr;
  for (std::size_t i = run; i-- > 0;)
    if (!python[i].file.empty() && !multiprocessing_file(python[i].file)) {
      target = &python[i];
      break;
    }
  if (!target || target->line < 1 || target->function.empty() || target->function[0] == '<')
    return home;
  home.function = target->function;
  home.file = target->file;
  const std::vector<std::string> lines = python_source::read_lines(target->file);
  if (static_cast<std::size_t>(target->line) > lines.size()) return home;
  // Its `def`: among the headers of the blocks that enclose the line that ran (each the nearest
  // line above indented less than the one below it), the one that defines it.
  const std::regex def(R"(^\s*(async\s+)?def\s+)" +
                       std::regex_replace(home.function, std::regex(R"(\W)"), "") + R"(\s*\()");
  const auto ran = static_cast<std::size_t>(target->line) - 1;
  std::size_t at = lines.size();
  std::size_t cur = indent(lines[ran]);
  if (cur == std::string::npos) return home;
  if (std::regex_search(lines[ran], def)) at = ran;
  for (std::size_t i = ran; at == lines.size() && i-- > 0;) {
    const std::string& l = lines[i];
    if (blank_or_comment(l) || indent(l) >= cur) continue;
    cur = indent(l);
    if (std::regex_search(l, def)) at = i;
    if (cur == 0) break;
  }
  if (at == lines.size()) return home;
  home.line = static_cast<int>(at + 1);
  const std::size_t d = indent(lines[at]);
  if (d == 0) {
    home.where = WorkerHome::Where::kTopLevel;
    return home;
  }
  // Indented: the blocks that enclose it, outward. Inside a function it is local (pickle cannot
  // name it); a method of classes up to the top level is found by its qualified name; under the
  // guard it is not defined in a worker at all. Any other block: not sure.
  static const std::regex def_line(R"(^(async\s+def|def)\b)"), class_line(R"(^class\b)");
  cur = d;
  for (std::size_t i = at; i-- > 0;) {
    const std::string& l = lines[i];
    if (blank_or_comment(l) || indent(l) >= cur) continue;
    cur = indent(l);
    const std::string stripped = l.substr(cur);
    if (std::regex_search(stripped, def_line)) {
      home.where = WorkerHome::Where::kNested;
      return home;
    }
    if (cur == 0 && python_source::is_main_guard(l)) {
      home.where = WorkerHome::Where::kUnderGuard;
      return home;
    }
    if (!std::regex_search(stripped, class_line)) return home;  // another block: not sure
    if (cur == 0) {
      home.where = WorkerHome::Where::kTopLevel;
      return home;
    }
  }
  return home;
}

nlohmann::json worker_homes(const Stacks& at_end, const Stacks& at_stall) {
  nlohmann::json out = nlohmann::json::array();
  std::set<int> seen;
  std::vector<const ThreadStack*> threads;
  for (const Stacks* s : {&at_end, &at_stall})
    for (const auto& t : s->threads) threads.push_back(&t);
  for (const ThreadStack* each : threads) {
    const ThreadStack& t = *each;
    if (t.python.empty() || seen.count(t.pid)) continue;
    const WorkerHome home = worker_home(t.python);
    if (home.function.empty()) continue;
    seen.insert(t.pid);
    out.push_back({{"pid", t.pid},
                   {"function", home.function},
                   {"file", home.file},
                   {"line", home.line},
                   {"home", home_name(home.where)}});
  }
  return out;
}

void add_start_method_facts(const ChildResult& r, nlohmann::json& details) {
  if (auto guards = fork_guards(r.python); !guards.empty()) details["fork_guards"] = guards;
  if (auto homes = worker_homes(r.stacks, r.stall_stacks); !homes.empty())
    details["worker_homes"] = homes;
}

}  // namespace fc::harness
