// `forkcheck watch [--out DIR] [--timeout S] -- CMD ARGS...`: runs the command like `exec`
// (subject_command.h: same supervisor, classification and reports; case and variant `watch`)
// with the watch shim preloaded into it and everything it starts, then reports every fork the
// tree made: details.forks in report.json, one entry per fork with its `hazards` (empty when
// the fork was safe), whether the child exec'd, how the child ended; and a printed summary.
// The raw events stay in DIR/watch-events/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fc::harness {

struct WatchOptions {
  std::vector<std::string> argv;     // forkcheck's own command line, for the report
  std::vector<std::string> command;  // what to run
  std::filesystem::path out = "forkcheck-report";
  double timeout_s = 600;
};

// Returns the command's own exit status (a signal as 128 + its number, like a shell), or
// 128 + the signal that interrupted forkcheck; throws UsageError for a command that cannot be
// watched or started, std::runtime_error when the shim is missing.
int watch_command(const WatchOptions& options);

}  // namespace fc::harness
