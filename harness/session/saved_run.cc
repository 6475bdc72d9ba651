#include "harness/session/saved_run.h"

#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>

#include "harness/base/json_shape.h"
#include "harness/base/usage_error.h"
#include "reports/run_log.h"

namespace fc::harness {
namespace {

using K = JsonKind;
using Fields = std::initializer_list<std::pair<const char*, JsonKind>>;

// The first of `fields` (none required) that `obj` has with another type; "" when none.
std::string optional_fields(const nlohmann::json& obj, Fields fields) {
  for (const auto& [key, kind] : fields)
    if (std::string p = member_problem(obj, key, kind, /*required=*/false); !p.empty()) return p;
  return "";
}

std::string saved_variant_problem(const nlohmann::json& v) {
  if (!v.is_object()) return "it is " + json_kind(v) + ", not an object";
  return optional_fields(
      v,
      {{"name", K::kString},           {"case", K::kString},         {"role", K::kString},
       {"expected", K::kString},       {"outcome", K::kString},      {"message", K::kString},
       {"start_method", K::kString},   {"expected_why", K::kString}, {"stdout", K::kString},
       {"stderr", K::kString},         {"note", K::kString},         {"matched", K::kBoolean},
       {"harness_error", K::kBoolean}, {"not_run", K::kBoolean},     {"interrupted", K::kBoolean},
       {"duration_s", K::kNumber},     {"exit", K::kObject},         {"details", K::kObject},
       {"watchdog", K::kObject},       {"stall", K::kObject},        {"hang", K::kObject},
       {"stacks", K::kArray},          {"steps", K::kArray}});
}

std::string saved_case_problem(const nlohmann::json& c) {
  if (!c.is_object()) return "it is " + json_kind(c) + ", not an object";
  if (std::string p = optional_fields(c, {{"id", K::kString},
                                          {"title", K::kString},
                                          {"verdict", K::kString},
                                          {"verdict_reason", K::kString},
                                          {"source", K::kObject},
                                          {"variants", K::kArray},
                                          {"not_selected", K::kArray}});
      !p.empty())
    return p;
  const nlohmann::json& variants = c.value("variants", nlohmann::json::array());
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (std::string p = saved_variant_problem(variants[i]); !p.empty())
      return "variants[" + std::to_string(i) + "]: " + p;
  return "";
}

// The run's header and end, as the reports read them.
std::string run_problem(const nlohmann::json& run) {
  return optional_fields(run, {{"command", K::kString},
                               {"started_at", K::kString},
                               {"interrupted", K::kBoolean},
                               {"complete", K::kBoolean},
                               {"duration_s", K::kNumber},
                               {"options", K::kObject},
                               {"environment", K::kObject},
                               {"platform", K::kObject},
                               {"argv", K::kArray},
                               {"catalog_errors", K::kArray}});
}

}  // namespace

std::string saved_report_problem(const nlohmann::json& report) {
  if (std::string p = optional_fields(report, {{"run", K::kObject},
                                               {"summary", K::kObject},
                                               {"tool", K::kObject},
                                               {"cases", K::kArray}});
      !p.empty())
    return p;
  if (report.contains("run"))
    if (std::string p = run_problem(report["run"]); !p.empty()) return "run: " + p;
  if (report.contains("summary"))
    if (std::string p = optional_fields(report["summary"], {{"ok", K::kBoolean},
                                                            {"by_verdict", K::kObject},
                                                            {"by_outcome", K::kObject},
                                                            {"cases", K::kInteger},
                                                            {"variants", K::kInteger},
                                                            {"mismatches", K::kInteger},
                                                            {"regressions", K::kInteger},
                                                            {"harness_failures", K::kInteger}});
        !p.empty())
      return "summary: " + p;
  const nlohmann::json& cases = report.value("cases", nlohmann::json::array());
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (std::string p = saved_case_problem(cases[i]); !p.empty())
      return "cases[" + std::to_string(i) + "]: " + p;
  return "";
}

std::string run_log_line_problem(const nlohmann::json& line) {
  if (std::string p = member_problem(line, "type", K::kString, false); !p.empty()) return p;
  const std::string type = line.value("type", "");
  if (type == "case") return saved_case_problem(line);
  if (type == "variant") return saved_variant_problem(line);
  if (type == "run" || type == "end") return run_problem(line);
  return "";
}

nlohmann::json load_saved_run(const std::filesystem::path& path, const std::string& label) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UsageError(label + " " + path.string() + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(label + " " + path.string() +
                     " is a directory; give its run.jsonl or report.json");
  std::ifstream in(path, std::ios::binary);
  std::string text(std::istreambuf_iterator<char>(in), {});
  if (!in && !in.eof()) throw UsageError(label + " " + path.string() + ": cannot read it");

  // report.json is one object with cases; a run log is one object per line, starting with its
  // "run" header (a one-line log parses as one object too, so look at "type").
  auto whole = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (whole.is_object() && whole.contains("cases") && !whole.contains("type")) {
    if (const std::string p = saved_report_problem(whole); !p.empty())
      throw UsageError(label + " " + path.string() + ": not a report forkcheck can read: " + p);
    return whole;
  }
  auto lines = reports::read_run_log(path);
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (const std::string p = run_log_line_problem(lines[i]); !p.empty())
      throw UsageError(label + " " + path.string() + ": not a run log forkcheck can read: record " +
                       std::to_string(i + 1) + ": " + p);
  bool any_run_line = false;
  for (const auto& l : lines)
    if (l.value("type", "") == "run" || l.value("type", "") == "case") any_run_line = true;
  if (!any_run_line)
    throw UsageError(label + " " + path.string() +
                     " is neither a forkcheck run log (run.jsonl) nor a report.json");
  return reports::fold_run_log(lines);
}

std::filesystem::path find_saved_run(const std::filesystem::path& path, const std::string& label) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(label + " " + path.string() + ": no such file or folder");
  if (!fs::is_directory(path, ec)) return path;
  // A run folder holds both: report.json is what the run ended with; a run cut short before its
  // reports were written left only its log.
  for (const char* name : {"report.json", reports::kRunLogFileName})
    if (fs::is_regular_file(path / name, ec)) return path / name;
  // forkcheck-report/ itself: `latest` links to the newest run folder, or, where no link could be
  // made (Windows without the privilege), the file LATEST names it (harness/session/out_dir.cc).
  fs::path latest = path / "latest";
  if (!fs::is_directory(latest, ec)) {
    std::ifstream named(path / "LATEST");
    std::string name;
    if (std::getline(named, name) && !name.empty() && name.find('/') == std::string::npos &&
        name.find('\\') == std::string::npos && name != "." && name != "..")
      latest = path / name;
  }
  if (fs::is_directory(latest, ec))
    for (const char* name : {"report.json", reports::kRunLogFileName})
      if (fs::is_regular_file(latest / name, ec)) return latest / name;
  throw UsageError(label + " " + path.string() +
                   " is a folder with no report.json, run.jsonl or latest run in it");
}

}  // namespace fc::harness
