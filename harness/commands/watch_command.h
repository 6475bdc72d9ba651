// `forkcheck watch [--out DIR] [--timeout S] -- CMD ARGS...`: runs the command like `exec`
// (subject_command.h: same supervisor, classification and reports; case and variant `watch`)
// with the watch shim preloaded into it and everything it starts, then reports every fork the
// tree made: details.forks in report.json, one entry per fork with its `hazards` (empty when
// the fork was safe), whether the child exec'd, how the child ended; and a printed summary.
// The raw events stay in DIR/watch-events/.
//
// It judges: a hazardous fork fails the watch (exit status 1, the case's verdict "failed", a JUnit
// <failure> per such fork, a red finding at the top of report.html and summary.md), unless its
// every hazard is of a kind accepted with --allow KIND (listed, marked allowed, not failing).
// Its exit status follows exec's rule (base/exit_status_codes.h); the program's own status is
// said in the judgement line and kept in the reports.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/session/subject_command.h"

namespace fc::harness {

struct WatchOptions {
  std::vector<std::string> argv;     // forkcheck's own command line, for the report
  std::vector<std::string> command;  // what to run
  std::filesystem::path out;         // empty: a new run folder (session/out_dir.h)
  double timeout_s = 0;              // none: it runs until it ends (--timeout sets one)
  LiveOptions live;
  std::vector<std::string> allow;  // hazard kinds accepted knowingly (fork_hazards.h)
};

// Returns, as exec_command does: 128 + the signal that interrupted forkcheck; else kFinding when
// the program failed, crashed, hung or timed out, or made a hazardous fork of a kind not allowed;
// else kOk. Throws UsageError for a command that does not exist or cannot be watched or an
// --allow that names no hazard kind (before anything is written), std::runtime_error when the
// shim is missing. One the OS refuses to start is a harness error in a complete report (kError).
int watch_command(const WatchOptions& options);

// For `forkcheck watch --help`: the exit statuses and the hazard kinds --allow takes.
std::string watch_help_footer();

}  // namespace fc::harness
