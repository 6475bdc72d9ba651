#include "harness/common/saved_run.h"

#include <fstream>
#include <iterator>
#include <string>

#include "harness/common/usage_error.h"
#include "reports/run_log.h"

namespace fc::harness {

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
  if (whole.is_object() && whole.contains("cases") && !whole.contains("type")) return whole;
  auto lines = reports::read_run_log(path);
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
  // made (Windows without the privilege), the file LATEST names it (harness/common/out_dir.cc).
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
