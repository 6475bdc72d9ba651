#include "harness/watch/worker_home.h"

#include <regex>
#include <set>

#include "harness/watch/main_guard.h"
#include "harness/watch/python_source.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

using python_source::blank_or_comment;
using python_source::indent;
using reports::ends_with;

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

namespace {

bool process_py(const PyFrame& f, const char* function) {
  return ends_with(f.file, "multiprocessing/process.py") && f.function == function;
}

// The frame of the function the worker was given: the first of the user's inner of process.py's
// `run` (past multiprocessing's and concurrent.futures' own), or, where a Process subclass
// overrides run(), that `run`, called by process.py's `_bootstrap` itself.
const PyFrame* worker_frame(const std::vector<PyFrame>& python) {
  for (std::size_t i = 0; i < python.size(); ++i) {
    if (process_py(python[i], "run")) {
      for (std::size_t j = i; j-- > 0;)
        if (!python[j].file.empty() && !multiprocessing_file(python[j].file)) return &python[j];
      return nullptr;
    }
    if (process_py(python[i], "_bootstrap"))
      return i > 0 && python[i - 1].function == "run" && !multiprocessing_file(python[i - 1].file)
                 ? &python[i - 1]
                 : nullptr;
  }
  return nullptr;
}

// A line that only closes what an earlier line opened (a signature's "):" at the def's own
// indent): no block header.
bool closes_brackets(const std::string& l) {
  const auto i = indent(l);
  return i != std::string::npos && (l[i] == ')' || l[i] == ']' || l[i] == '}');
}

}  // namespace

WorkerHome worker_home(const std::vector<PyFrame>& python) {
  WorkerHome home;
  const PyFrame* target = worker_frame(python);
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
    if (blank_or_comment(l) || indent(l) >= cur || closes_brackets(l)) continue;
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
  // A decorator's wrapper made with functools.wraps carries the decorated function's name, by
  // which pickle finds it: where that is, this reading does not know.
  for (std::size_t i = at;
       i-- > 0 && !blank_or_comment(lines[i]) && lines[i][indent(lines[i])] == '@';)
    if (lines[i].find("wraps(") != std::string::npos) return home;
  // Indented: the blocks that enclose it, outward. Inside a function it is local (pickle cannot
  // name it); a method is where its outermost class is, which is what must move; under the guard
  // it is not defined in a worker at all. Any other block: not sure.
  static const std::regex def_line(R"(^(async\s+def|def)\b)"),
      class_line(R"(^class\s+([A-Za-z_][A-Za-z0-9_]*))");
  cur = d;
  for (std::size_t i = at; i-- > 0;) {
    const std::string& l = lines[i];
    if (blank_or_comment(l) || indent(l) >= cur || closes_brackets(l)) continue;
    cur = indent(l);
    const std::string stripped = l.substr(cur);
    std::smatch cls;
    if (std::regex_search(stripped, def_line)) {
      home.where = WorkerHome::Where::kNested;
      return home;
    }
    if (cur == 0 && python_source::is_main_guard(l)) {
      home.where = WorkerHome::Where::kUnderGuard;
      return home;
    }
    if (!std::regex_search(stripped, cls, class_line)) return home;  // another block: not sure
    home.in_class = cls[1];
    home.class_line = static_cast<int>(i + 1);
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
    nlohmann::json one = {{"pid", t.pid},
                          {"function", home.function},
                          {"file", home.file},
                          {"line", home.line},
                          {"home", home_name(home.where)}};
    if (!home.in_class.empty()) {
      one["class"] = home.in_class;
      one["class_line"] = home.class_line;
    }
    out.push_back(std::move(one));
  }
  return out;
}

void add_start_method_facts(const ChildResult& r, nlohmann::json& details) {
  if (auto guards = fork_guards(r.python); !guards.empty()) details["fork_guards"] = guards;
  if (auto homes = worker_homes(r.stacks, r.stall_stacks); !homes.empty())
    details["worker_homes"] = homes;
}

}  // namespace fc::harness
