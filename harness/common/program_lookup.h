// The program a user's command names (`exec`, `watch`), found and checked before anything is
// written.
#pragma once

#include <string>

namespace fc::harness {

// The full path of `program` (looked up in PATH when it has no '/'); throws UsageError, naming
// the subcommand, when it does not exist or is not executable.
std::string resolve_command(const std::string& program, const std::string& subcommand = "exec");

}  // namespace fc::harness
