#include "harness/commands/report_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "harness/base/exit_status_codes.h"
#include "harness/base/json_shape.h"
#include "harness/base/usage_error.h"
#include "harness/session/out_dir.h"
#include "harness/session/saved_run.h"
#include "reports/reporter.h"

namespace fc::harness {

int report_command(const ReportOptions& options) {
  nlohmann::json report = load_saved_run(options.from);
  std::filesystem::path out = options.out;
  if (out.empty()) out = options.from.has_parent_path() ? options.from.parent_path() : ".";
  prepare_out_dir(out);
  std::vector<std::filesystem::path> written;
  try {
    written = reports::write_reports(reports::read_report(report), out);
  } catch (const nlohmann::json::exception& e) {
    // A field of another type than forkcheck writes, deeper than load_saved_run looks.
    throw UsageError("--from " + options.from.string() +
                     ": not a report forkcheck can read: " + json_error_text(e));
  }
  for (const auto& p : written) std::printf("wrote %s\n", p.string().c_str());
  return exit_status::kOk;
}

}  // namespace fc::harness
