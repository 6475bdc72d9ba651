#include "harness/commands/report_command.h"

#include "harness/common/out_dir.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "harness/common/exit_status_codes.h"
#include "harness/common/usage_error.h"
#include "reports/reporter.h"
#include "reports/run_log.h"

namespace fc::harness {

nlohmann::json load_saved_run(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UsageError("--from " + path.string() + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("--from " + path.string() + " is a directory; give its run.jsonl or report.json");
  std::ifstream in(path, std::ios::binary);
  std::string text(std::istreambuf_iterator<char>(in), {});
  if (!in && !in.eof()) throw UsageError("--from " + path.string() + ": cannot read it");

  // report.json is one object with cases; a run log is one object per line, starting with its
  // "run" header (a one-line log parses as one object too, so look at "type").
  auto whole = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (whole.is_object() && whole.contains("cases") && !whole.contains("type")) return whole;
  auto lines = reports::read_run_log(path);
  bool any_run_line = false;
  for (const auto& l : lines)
    if (l.value("type", "") == "run" || l.value("type", "") == "case") any_run_line = true;
  if (!any_run_line)
    throw UsageError("--from " + path.string() + " is neither a forkcheck run log (run.jsonl) nor a report.json");
  return reports::fold_run_log(lines);
}

int report_command(const ReportOptions& options) {
  nlohmann::json report = load_saved_run(options.from);
  std::filesystem::path out = options.out;
  if (out.empty()) out = options.from.has_parent_path() ? options.from.parent_path() : ".";
  prepare_out_dir(out);
  for (const auto& p : reports::write_reports(report, out)) std::printf("wrote %s\n", p.string().c_str());
  return exit_status::kOk;
}

}  // namespace fc::harness
