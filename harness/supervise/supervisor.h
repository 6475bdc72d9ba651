// The supervisor: runs child processes under a watchdog and tells the truth about how they ended.
// Each child runs in its own process group with stdin from /dev/null, stdout and stderr into
// capped captures, a channel (a pipe) for structured messages, an empty signal mask, the signal
// dispositions forkcheck inherited and no other descriptor. Its whole tree (every process
// descended from it, also those that left its group or session, and the orphans re-parented to
// us) is looked at every launch::TreeActivity::kLookEvery. The watchdog calls time when the
// deadline passes, or when a step the child announced on its channel is overdue while the whole
// tree is blocked; it records whether the tree was blocked (hang) or working (timeout), takes the
// stacks of every thread under one budget, then SIGTERM (and SIGCONT) to every process of the
// tree, a grace period, SIGKILL, and reaps. Every process it signals is held by a pidfd (or its
// pid and start time), so no signal reaches a process that is not ours.
// On Windows a job object holds the tree instead (supervisor_win32.cc).
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

// What the tree of a live-watched child is doing, after each look (LaunchSpec::on_look).
struct LiveStatus {
  double elapsed_s = 0;
  std::size_t processes = 0;
  double cpu_share = 0;  // CPUs the tree used since the previous look (1.0: one CPU's worth)
  double still_s = 0;    // how long the whole tree has been still (0 while it works)
};

// A stall of a live-watched child: its whole tree blocked through a stall window while it was
// left running (LaunchSpec::note_stalls).
struct StallNote {
  enum class Event { kStalled, kStacksTaken, kResumed };
  double after_s = 0;  // from the start, when it was seen
  double still_s = 0;  // how long the tree had been still then
  std::string waiting_in;
  std::size_t processes = 0, threads = 0;
  double resumed_after_s = -1;  // when it worked again; -1: it did not
  double cpu_s_in_window = 0, window_s = 0;  // what "still" measured: CPU in the stall window
  bool first = true;  // the first stall (its stacks are taken); later ones are only said
};

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0]: the program (a path, or a name looked up in PATH)
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  double timeout_s = 60;          // the whole run
  double grace_s = 1.0;           // between SIGTERM and SIGKILL
  size_t capture_cap = 64 * 1024; // head and tail kept of stdout and of stderr, each
  bool channel = true;            // give the child FORKCHECK_CHANNEL_FD
  bool collect_stacks = true;     // take the stacks of the tree before ending it
  // All the stacks of one tree are taken at once, within this much time in all: a variant ends
  // at most timeout_s + stacks_budget_s + grace_s (and reaping) after it started.
  double stacks_budget_s = 5;
  // Fork the child from this program's zygote (harness/zygote.h) rather than exec it; ignored
  // when `env` is not empty (libraries read some variables as they load, before any fork).
  class Zygote* zygote = nullptr;

  // Live watching (exec, watch). Everything the child writes, as it comes (stream 1: stdout,
  // 2: stderr), beside the capture; what its tree does after each look.
  std::function<void(int stream, const char* data, std::size_t n)> on_output;
  std::function<void(const LiveStatus&)> on_look;
  // When the whole tree has been blocked through a stall window: say so (kStalled), take its
  // stacks once with the tree left running (kStacksTaken; they are in ChildResult::stall_stacks)
  // and go on waiting; say so if it works again (kResumed). The deadline still ends it.
  bool note_stalls = false;
  std::function<void(StallNote::Event, const StallNote&, const Stacks* taken)> on_stall;
  // End it as a hang once the whole tree has been still this long (0: never; at least a stall
  // window is needed to tell).
  double hang_after_s = 0;
};

// A step that was announced and then made no progress past its allowance, the whole tree blocked.
struct StepHang {
  int pid = 0;
  std::string step;
  double within_s = 0;
  double waited_s = 0;  // from the announcement to the verdict
};

// What the supervisor saw of a child's tree when it called time (the deadline, or a stalled
// step), or else when the child ended (launch/tree_activity.h has the rule).
struct TreeFacts {
  bool blocked = false;       // quiet through the stall window: a hang, not a timeout
  double still_s = 0;         // how long the whole tree had been blocked
  double window_s = 0;        // the span cpu_s_in_window covers (the stall window, or less)
  double cpu_s_in_window = 0;
  double cpu_s = 0;           // CPU the tree used while watched
  double longest_still_s = 0;
  std::size_t processes = 0, threads = 0, looks = 0;
  // What its threads were waiting in, e.g. "futex (5), wait4 (1)" (Linux: /proc's syscall and
  // wait channel of each thread); empty when unknown.
  std::string waiting_in;
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
  TreeFacts tree;  // as of the call (deadline or stall), else as of its end
  double called_after_s = -1;  // when time was called (deadline or stall), from the start; -1: never
  bool sent_sigterm = false;
  bool sent_sigkill = false;
  std::vector<int> leftovers_killed;  // processes of its tree still alive after it ended
  std::vector<int> leftovers_surviving;  // of those, still alive after every round of SIGKILL
  std::vector<int> group_strangers;      // in its process group but not of its tree: spared
  // Time was called because the whole tree had been still for LaunchSpec::hang_after_s.
  bool still_too_long = false;
  double hang_after_s = 0;  // LaunchSpec::hang_after_s, for the report
  std::optional<StallNote> stall;  // the first stall of a live-watched tree (note_stalls)
  Stacks stall_stacks;             // its stacks, taken then, with the tree left running
  int interrupted_by = 0;             // forkcheck was interrupted by this signal while it ran
  Capture out, err;
  std::optional<nlohmann::json> result;  // the case's result message, when one came
  nlohmann::json early_details = nlohmann::json::object();  // details sent before the result
  nlohmann::json steps = nlohmann::json::array();
  size_t bad_channel_lines = 0;
  std::string bad_channel_line;  // the first one, control bytes escaped, at most 1 KiB
  std::string bad_channel_why;
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

// Every child of this process is a supervised tree's (forkcheck itself starts none but through
// the supervisor). Without it, a child in this process's own process group that no tree claims is
// left alone, as a child the embedding program may have started itself; with it, such a child (an
// escaper that joined forkcheck's group and dropped the run token) is ended with its tree.
void claim_every_child();

}  // namespace fc::harness
