// `forkcheck report --from FILE [--out DIR]`: renders every report again from a saved run, either
// its run log (run.jsonl, folded as at the end of a run) or its report.json. A report is a pure
// function of the run log, so nothing is run.
#pragma once

#include <filesystem>
#include <string>

namespace fc::harness {

struct ReportOptions {
  std::filesystem::path from;
  std::filesystem::path out;  // empty: beside FILE
};

// Returns exit_status::kOk; throws UsageError for a bad --from or --out.
int report_command(const ReportOptions& options);

}  // namespace fc::harness
