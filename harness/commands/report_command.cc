#include "harness/commands/report_command.h"

#include <cstdio>
#include <string>

#include "harness/common/exit_status_codes.h"
#include "harness/common/out_dir.h"
#include "harness/common/saved_run.h"
#include "reports/reporter.h"

namespace fc::harness {

int report_command(const ReportOptions& options) {
  nlohmann::json report = load_saved_run(options.from);
  std::filesystem::path out = options.out;
  if (out.empty()) out = options.from.has_parent_path() ? options.from.parent_path() : ".";
  prepare_out_dir(out);
  for (const auto& p : reports::write_reports(report, out)) std::printf("wrote %s\n", p.string().c_str());
  return exit_status::kOk;
}

}  // namespace fc::harness
