// `forkcheck exec [--timeout S] [--out DIR] -- CMD ARGS...`: any command under the same
// supervisor, classification and reports as the cases, as one case (`exec`) with one variant
// (see subject_command.h, which `forkcheck watch` shares).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/session/subject_command.h"

namespace fc::harness {

struct ExecOptions {
  std::vector<std::string> argv;     // forkcheck's own command line, for the report
  std::vector<std::string> command;  // what to run
  std::filesystem::path out;         // empty: a new run folder (session/out_dir.h)
  double timeout_s = 0;              // none: it runs until it ends (--timeout sets one)
  LiveOptions live;
};

// Returns forkcheck's exit status (base/exit_status_codes.h), by the rule `watch` follows too:
// kOk when the command ended by itself with status 0; kFinding when it failed, crashed, hung or
// timed out (its own exit status is in the summary and report.json); 128 + N when forkcheck was
// interrupted by signal N. Throws UsageError for a command that does not exist (before anything is
// written); one the OS refuses to start (execve) is a harness error in a complete report (kError).
int exec_command(const ExecOptions& options);

}  // namespace fc::harness
