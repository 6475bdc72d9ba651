// A user's own command, run as the one variant (role "subject") of a one-variant case: what
// `forkcheck exec` and `forkcheck watch` share. The command runs under the supervisor (its own
// process group, capped output, the deadline, nothing left behind), is classified like any
// variant, and the run goes through RunSession into every report format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/supervise/classify.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

// The stacks of a user's stuck tree, taken once a stall or --hang-after calls time, get this long
// at most (LaunchSpec::stacks_budget_s; after the deadline the watchdog's own bound applies): gdb
// reading a Python process's frames takes seconds where libtorch is loaded.
constexpr double kSubjectStacksBudgetS = 10;

// How a user's program is watched while it runs (exec, watch): its output shown as it comes
// (unless quiet), a status line on a terminal, a stall said at once with its stacks.
struct LiveOptions {
  bool quiet = false;       // do not pass the program's output through (it is still captured)
  double hang_after_s = 0;  // a stall this long ends it as a hang (0: only the deadline does)
  // Python's multiprocessing default start method in every Python process of the tree (and
  // forkcheck::launch's): "" leaves the program's own; force: over the program's own choices too.
  std::string start_method;
  bool force_start_method = false;
  // --worker-failures: "fail" counts every failed worker not shown dealt with, "report" none;
  // "": those shown not dealt with (reports/python_view.h).
  std::string worker_failures;
};

// The environment that sets a start method (FORKCHECK_START_METHOD, read by the Python
// bootstrap and by forkcheck::launch), or none for "".
std::vector<std::pair<std::string, std::string>> start_method_env(const std::string& method,
                                                                  bool force);

struct SubjectCommand {
  std::string name;                  // the subcommand, also the case and variant id: "exec"
  std::vector<std::string> argv;     // forkcheck's own command line, for the report
  std::vector<std::string> command;  // what to run
  std::filesystem::path out = "forkcheck-report";
  double timeout_s = 0;  // none
  LiveOptions live;
  bool prints_after =
      false;  // the command prints more after the run: it ends with the reports line
  std::vector<std::pair<std::string, std::string>> env;  // added to the command's environment
  // `matrix`: the command once per start method, each a variant named by it, one after the
  // other; empty: one variant named `name`, under live.start_method if set.
  std::vector<std::string> start_methods;
  // Called when the run really starts, just before the command is started (watch: its events
  // folder is emptied then, not before).
  std::function<void()> before_start;
  // Called after the command ended and before its result is recorded: adds what the subcommand
  // learned to the variant's details and message (the message is empty for an interrupted run).
  std::function<void(const ChildResult&, nlohmann::json& details, std::string& message)> annotate;
  // `attach`: watch this running process and its tree instead of starting `command` (which then
  // only names it: its command line as /proc has it); end it only if hung and `kill_on_hang`.
  int attach_pid = 0;
  std::uint64_t attach_start_time = 0;  // as the command found it: a later process is not it
  bool kill_on_hang = false;
};

struct SubjectResult {
  ChildResult result;  // the last variant's
  Classified classified;
  bool all_ok = true;        // every variant ok, and no process of any failed
  bool interrupted = false;  // forkcheck was interrupted: the report is partial
  // "" or why a process of it crashed, raised or exited non-zero while the program exited 0
  // (reports/python_view.h): that fails the program too.
  std::string descendants_failure;
};

// Runs the command and writes the reports. A command the OS refuses to start (execve) is a
// harness error (outcome error) in a complete report. The program must already be resolved
// (resolve_command) and the out directory prepared.
SubjectResult run_subject(const SubjectCommand& subject, const std::string& program);

}  // namespace fc::harness
