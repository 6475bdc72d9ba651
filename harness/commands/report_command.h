// `forkcheck report --from FILE [--out DIR]`: renders every report again from a saved run, either
// its run log (run.jsonl, folded as at the end of a run) or its report.json. A report is a pure
// function of the run log, so nothing is run.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct ReportOptions {
  std::filesystem::path from;
  std::filesystem::path out;  // empty: beside FILE
};

// The report held by `path`, whichever of the two kinds it is; throws UsageError when the file
// is missing, unreadable, or neither.
nlohmann::json load_saved_run(const std::filesystem::path& path);

// Returns exit_status::kOk; throws UsageError for a bad --from or --out.
int report_command(const ReportOptions& options);

}  // namespace fc::harness
