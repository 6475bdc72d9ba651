#include "reports/start_method_reasons.h"

#include <cstdio>
#include <regex>
#include <vector>

#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/watch_view.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

const std::vector<PythonProcess>& python_processes(const Variant& v) {
  static const std::vector<PythonProcess> none;
  return v.python ? v.python->processes : none;
}

// Every exception the program's processes told ("Type: message"), then its error output.
std::string what_it_said(const Variant& v) {
  std::string text;
  for (const auto& p : python_processes(v))
    for (const auto& x : p.exceptions) text += x.type + ": " + x.message + "\n";
  return one_line(text + v.stderr_text);
}

bool has(const std::string& text, const char* piece) {
  return text.find(piece) != std::string::npos;
}

// The first exception any process of it told: "KeyError: 'scale'" (a Pool's worker's comes back
// to the parent and is raised there).
std::string first_exception(const Variant& v) {
  for (const auto& p : python_processes(v))
    for (const auto& x : p.exceptions) {
      std::string type = x.type;
      if (type.rfind("builtins.", 0) == 0) type = type.substr(9);
      if (!type.empty())
        return shorten(type + (x.message.empty() ? "" : ": " + one_line(x.message)), 160);
    }
  return "";
}

}  // namespace

bool subject_ok(const Variant& v) {
  return v.outcome == "ok" && descendants_failure(v).empty() && watch_failure(v).empty();
}

MethodReason start_method_reason(const Variant& v, const Case& all) {
  if (subject_ok(v) || unfinished(v)) return {};
  const std::string& method = v.start_method;
  const std::string said = what_it_said(v);
  if (has(said, "Can't pickle local object") || has(said, "Can't get local object") ||
      has(said, "Can't pickle <function <lambda>") || has(said, "<lambda>: attribute lookup"))
    return {
        "the function given to a Pool (under every method) or a Process's target (under spawn "
        "and forkserver) is pickled to reach the worker, and this one is defined inside a "
        "function or is a lambda, which cannot be pickled",
        "define the worker function at module level"};
  static const std::regex main_attribute("Can't get attribute '([^']+)' on <module '__mp_main__'");
  if (std::smatch m; std::regex_search(said, m, main_attribute))
    return {"'" + m[1].str() + "' is defined under `if __name__ == \"__main__\":`: a " + method +
                " worker imports the main module again as __mp_main__, without running that "
                "block, and finds no '" +
                m[1].str() + "'",
            "move '" + m[1].str() + "' to module level, above the __main__ guard"};
  if (has(said, "before the current process has finished its bootstrapping phase"))
    return {
        "the main module starts processes without an `if __name__ == \"__main__\":` guard: each " +
            method +
            " worker imports it again, reaches that code and raises (a Pool starts "
            "new workers for ever)",
        "put the code that starts processes under `if __name__ == \"__main__\":`"};
  if (!v.explained_by.empty()) {
    const ExplainedBy& k = v.explained_by[0];
    return {"the error is the one forkcheck's case " + k.case_id + " reproduces (" + k.title + ")",
            k.fix + " (forkcheck list " + k.case_id + ")"};
  }
  bool fork_ok = false, other_ok = false;
  for (const Variant& w : all.variants) {
    if (w.start_method == "fork" && subject_ok(w)) fork_ok = true;
    if (w.start_method != "fork" && subject_ok(w)) other_ok = true;
  }
  const std::string raised = first_exception(v);
  if (method != "fork" && fork_ok && !raised.empty())
    return {"ok under fork, but " + raised + " was raised under " + method + ": a worker that " +
                method +
                " starts imports the main module afresh, so what the parent set while "
                "it ran (a global assigned in main(), a configuration loaded after start) is not "
                "there; fork copied it",
            "pass what the worker needs as an argument, or set it at module level, where every "
            "process runs"};
  if (method == "fork" && other_ok)
    return {
        "it failed under fork only, and another method was ok here: a hazard of fork itself "
        "(the state fork copies: threads' locks, an OpenMP pool, CUDA)",
        "start workers with spawn or forkserver (multiprocessing.get_context(\"forkserver\"))"};
  return {};
}

std::string default_method_note(const Environment& environment) {
  const std::string version =
      environment.python && environment.python->python ? environment.python->python->version : "";
  const std::string os = field(environment.os, "sysname");
  int major = 0, minor = 0;
  const bool known = std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2;
  // multiprocessing's documented defaults: fork on Linux up to 3.13, forkserver from 3.14;
  // spawn on macOS from 3.8 and on Windows always.
  std::string method;
  if (known && os == "Linux") method = major == 3 && minor < 14 ? "fork" : "forkserver";
  if (known && os == "Darwin") method = major == 3 && minor < 8 ? "fork" : "spawn";
  if (known && os == "Windows") method = "spawn";
  const std::string now =
      method.empty() ? ""
                     : "Python " + version + " starts workers with " + method + " by default here";
  return now + (now.empty() ? "" : "; ") +
         "Python 3.14 made forkserver the default on Linux, where it was fork";
}

}  // namespace fc::reports
