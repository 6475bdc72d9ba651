// The supervisor: runs child processes under a watchdog and tells the truth about how they ended.
// Each child runs in its own process group with stdin from /dev/null, stdout and stderr into
// capped captures, and a channel (a pipe) for structured messages. The watchdog ends a child when
// its deadline passes or when a step it announced on the channel stops making progress:
// SIGTERM (and SIGCONT) to the whole group, a grace period, SIGKILL to the group, then reap.
// On Windows a job object holds the tree instead of a process group (supervisor_win32.cc).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stacks/stacks.h"
#include "harness/supervise/capture.h"
#include "harness/supervise/exit_status.h"

namespace fc::harness {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0]: the program (a path, or a name looked up in PATH)
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  double timeout_s = 60;          // the whole run
  double grace_s = 1.0;           // between SIGTERM and SIGKILL
  size_t capture_cap = 64 * 1024; // head and tail kept of stdout and of stderr, each
  bool channel = true;            // give the child FORKCHECK_CHANNEL_FD
  bool collect_stacks = true;     // take the stacks of a hung tree before killing it
  double stacks_time_limit_s = 15;
  // Fork the child from this program's zygote (harness/zygote.h) rather than exec it; ignored
  // when `env` is not empty (libraries read some variables as they load, before any fork).
  class Zygote* zygote = nullptr;
};

// A step that was announced and then made no progress past its allowance.
struct StepHang {
  int pid = 0;
  std::string step;
  double within_s = 0;
  double waited_s = 0;  // from the announcement to the verdict
};

struct ChildResult {
  bool started = false;
  std::string start_error;  // why it could not be started
  std::string started_via;  // "exec" or "zygote"
  std::string start_note;   // why a zygote was asked for and not used
  int pid = -1;
  ExitStatus exit;
  double duration_s = 0;
  double timeout_s = 0;  // the deadline it ran under
  bool deadline_passed = false;
  std::optional<StepHang> step_hang;
  bool sent_sigterm = false;
  bool sent_sigkill = false;
  std::vector<int> leftovers_killed;  // processes of its tree still alive after it ended
  int interrupted_by = 0;             // forkcheck was interrupted by this signal while it ran
  Capture out, err;
  std::optional<nlohmann::json> result;  // the case's result message, when one came
  nlohmann::json early_details = nlohmann::json::object();  // details sent before the result
  nlohmann::json steps = nlohmann::json::array();
  size_t bad_channel_lines = 0;
  Stacks stacks;  // of a hung tree, taken before it was killed
};

class Supervisor {
 public:
  using Done = std::function<void(size_t index, ChildResult&& result)>;

  // Runs every spec, at most `jobs` at once, calling `done` (on this thread) as each one ends.
  // Returns when all have ended and been reaped. After an interrupt (see interrupt.h) what runs
  // is ended and what has not started is not started: `done` gets those with interrupted_by set.
  void run(const std::vector<LaunchSpec>& specs, int jobs, const Done& done);
};

// Runs one spec to its end.
ChildResult supervise(const LaunchSpec& spec);

}  // namespace fc::harness
