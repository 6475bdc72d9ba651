#include "harness/session/program_lookup.h"

#include <filesystem>
#include <system_error>

#include "harness/base/usage_error.h"
#include "harness/platform/host.h"

namespace fc::harness {

std::string resolve_command(const std::string& program, const std::string& subcommand) {
  if (program.empty())
    throw UsageError(subcommand + ": no command given (forkcheck " + subcommand +
                     " -- CMD ARGS...)");
  std::string path = program;
  if (!std::filesystem::path(program).has_parent_path()) {  // a bare name: look in PATH
    path = find_in_path(program);
    if (path.empty()) throw UsageError(subcommand + ": command not found: " + program);
  }
  std::string why;
  std::error_code ec;
  if (!is_executable_file(path, why) && !std::filesystem::is_regular_file(path, ec))
    throw UsageError(subcommand + ": cannot execute " + program + ": " + why);
  return path;
}

}  // namespace fc::harness
