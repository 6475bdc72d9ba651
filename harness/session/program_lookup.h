// The program a user's command names (`exec`, `watch`), found before anything is written.
#pragma once

#include <string>

namespace fc::harness {

// The full path of `program` (looked up in PATH when it has no '/'); throws UsageError, naming
// the subcommand, when there is no such file (or it is a directory). A file the OS may refuse to
// run (no execute permission, a missing #! interpreter, not a program) is not bad input: the
// refusal at execve is the run's, said in a complete report (subject_command.h).
std::string resolve_command(const std::string& program, const std::string& subcommand = "exec");

}  // namespace fc::harness
