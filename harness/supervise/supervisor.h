// The supervisor: runs child processes under a watchdog and tells the truth about how they ended.
// Each child runs in its own process group with forkcheck's stdin (or /dev/null: LaunchSpec::
// stdin), stdout and stderr into capped captures, a channel (a pipe) for structured messages, an
// empty signal mask, the signal dispositions forkcheck inherited and no other descriptor. Its
// whole tree (every process descended from it, also those that left its group or session, and the
// orphans re-parented to us) is looked at every launch::TreeActivity::kLookEvery. What the
// watchdog decides (when time is called, what is said while the program is left running, how
// stacks are taken, how the tree is ended) is written once, for every platform, in watchdog.h;
// the supervisor_posix.cc and supervisor_win32.cc siblings start, read, look, signal and reap.
// Every process it signals is held by a pidfd (or its pid and start time), so no signal reaches a
// process that is not ours. On Windows a job object holds the tree instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stacks/stacks.h"
#include "harness/supervise/capture.h"
#include "harness/supervise/exit_status.h"
#include "harness/supervise/memory_watch.h"
#include "harness/supervise/wait_graph.h"

namespace fc::harness {

// What the tree of a live-watched child is doing, after each look (LaunchSpec::on_look).
struct LiveStatus {
  double elapsed_s = 0;
  std::size_t processes = 0;
  double cpu_share = 0;  // CPUs the tree used since the previous look (1.0: one CPU's worth)
  double still_s = 0;    // how long the whole tree has been still (0 while it works)
  double starved_s = 0;  // how long it has wanted a CPU it did not get (0 while it gets one)
};

// A process that can never go on by itself (stuck_processes.h): every thread of it waits on a
// futex private to it, with no timeout, and none has run since.
struct ProcessStall {
  int pid = 0, ppid = 0;
  std::string name;
  std::size_t threads = 0;
  bool pause = false;  // it waits in pause() with no signal handler, not on a futex
  double since_s = 0;  // from the start: since when it has been stuck
  double stuck_s = 0;  // how long, when it was seen (or when time was called)
  // What the rest of the tree did meanwhile: the CPUs it used over the last stall window, and
  // whether it was still too.
  double rest_cpu_share = 0;
  bool rest_still = false;
};

// A thread of a quiet tree asleep in a wait that ends by itself (sleeping_threads.h): the tree is
// SLEEPING, not blocked.
struct TreeSleep {
  int pid = 0;
  int tid = 0;
  std::string process;  // its command name
  std::string wait;     // the system call: "clock_nanosleep", "futex", "select"
  double since_s = 0;   // from the start, when it was first seen asleep in it
  // How long until it ends, as of the look: exactly (`ends_exact`), or at most; -1: not known.
  double ends_in_s = -1;
  bool ends_exact = false;
  bool alarm = false;          // the wait its pending alarm ends (SleepingThread::alarm)
  nlohmann::json alarm_where;  // where the alarm was set
};

// Something said of a live-watched child while it was left running (LaunchSpec::note_stalls): a
// stall of its whole tree (blocked through a stall window), a process of it stuck while the rest
// works, starvation (it wanted a CPU and got next to none: the machine is overloaded), the stacks
// taken of a stall, and its end.
struct StallNote {
  // kStuck: a process of a tree already said stalled is proven stuck since (`process`).
  enum class Event { kStalled, kStacksTaken, kResumed, kStarved, kSleeping, kStuck };
  enum class Kind { kTree, kProcess };
  Kind kind = Kind::kTree;
  double after_s = 0;  // from the start, when it was seen
  double still_s = 0;  // how long the tree (kTree) or the process (kProcess) had been still then
  std::string waiting_in;
  std::size_t processes = 0, threads = 0;
  double resumed_after_s = -1;               // when it worked again; -1: it did not
  double cpu_s_in_window = 0, window_s = 0;  // what "still" measured: CPU in the stall window
  bool first = true;  // the first stall (its stacks are taken); later ones are only said
  std::optional<ProcessStall> process;  // kProcess: which process; kTree: one stuck in it, if any
  // kStarved: how long it had wanted a CPU, the machine's load average (-1: unknown) and CPUs.
  double starved_s = 0, load_average = -1;
  unsigned cpus = 0;
  std::optional<TreeSleep> sleep;  // kSleeping: the thread whose sleep ends first
};

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0]: the program (a path, or a name looked up in PATH)
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  double timeout_s = 60;           // the whole run; 0: no deadline (it runs until it ends)
  double grace_s = 1.0;            // between SIGTERM and SIGKILL
  size_t capture_cap = 64 * 1024;  // head and tail kept of stdout and of stderr, each
  bool channel = true;             // give the child FORKCHECK_CHANNEL_FD
  // Give the child forkcheck's own stdin (exec, watch: a program that reads its input); else
  // /dev/null. A terminal is relayed through a pipe (the child runs in a process group of its
  // own, which may not read the terminal).
  bool stdin_passthrough = false;
  bool collect_stacks = true;  // take the stacks of the tree before ending it
  // The folder of the Python bootstrap (harness/python: its sitecustomize.py), put first on the
  // child's PYTHONPATH with a channel for it to talk on (python_channel.h); "" for none.
  std::string python_bootstrap;
  std::string
      python_bytecode;  // where it keeps its compiled code (FORKCHECK_PY_BYTECODE); "": none
  // The stacks taken once time is called get at most this long, and at most the watchdog's own
  // bound (watchdog.h: the deadline is a promise).
  double stacks_budget_s = 5;
  bool stacks_source_lines = true;  // each frame's file and line (StacksRequest::source_lines)
  // Fork the child from this program's zygote (harness/supervise/zygote.h) rather than exec it;
  // ignored when `env` is not empty (libraries read some variables as they load, before any fork).
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
  // Sample each process's memory as the tree is looked at, and tell the OOM killer's victims
  // (memory_watch.h: ChildResult::memory); say live when forked processes' private memory grows
  // far past what they had at first.
  bool watch_memory = false;
  std::function<void(const MemoryGrowth&)> on_memory_growth;
  // End it as a hang once the whole tree, or one process of it that can never go on, has been
  // still this long (0: never; at least a stall window is needed to tell).
  double hang_after_s = 0;
  // Watch this running process and its descendants (forkcheck attach) instead of starting one:
  // argv, env, stdin and the bootstrap do not apply. Its output is not ours to read, and its exit
  // status goes to its own parent. When time is called (a hang, the deadline) or forkcheck is
  // interrupted, the watch ends and the tree is left running as it was, unless `end_attached`:
  // then it is ended as exec ends its child's.
  int attach_pid = 0;
  std::uint64_t attach_start_time = 0;  // its start time when asked for (0: as found)
  bool end_attached = false;
  // End it once this many of its Python processes have failed at start with the same error
  // (kStartFailure: a module without a __main__ guard, whose spawned workers a Pool starts for
  // ever), rather than at the deadline (0: never).
  int end_after_start_failures = 0;
};

// A spawned worker's error at start that repeats for ever under a Pool: the module has no
// __main__ guard (multiprocessing's _check_not_importing_main).
constexpr const char* kStartFailure = "finished its bootstrapping phase";

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
  bool blocked = false;  // quiet through the stall window, no thread in a timed sleep: a hang
  // Quiet, with a thread asleep in a wait that ends by itself: not a hang (the first such thread,
  // the one that wakes first).
  std::optional<TreeSleep> sleep;
  double still_s = 0;   // how long the whole tree had been blocked
  double window_s = 0;  // the span cpu_s_in_window covers (the stall window, or less)
  double cpu_s_in_window = 0;
  double cpu_s = 0;  // CPU the tree used while watched
  double longest_still_s = 0;
  // Starvation: how long it had wanted a CPU without getting one (as of the call), the longest
  // such stretch, and the run-queue wait of all its threads (Linux; 0 elsewhere). `starved`: for
  // a stall window at least (watchdog.h): a moment's wait on a busy machine is not starvation.
  double starved_s = 0, longest_starved_s = 0, run_queue_s = 0;
  bool starved = false;
  bool stopped = false;  // a process of it was stopped by a signal or a tracer not ours
  std::size_t processes = 0, threads = 0, looks = 0;
  // What its threads were waiting in, e.g. "futex (5), wait4 (1)" (Linux: /proc's syscall and
  // wait channel of each thread); empty when unknown.
  std::string waiting_in;
};

// A watch of a process forkcheck did not start (LaunchSpec::attach_pid), and how it ended.
struct AttachedWatch {
  int parent_pid = 0;         // its parent when the watch began: where its exit status goes
  bool left_running = false;  // the watch ended (time called, interrupted) with it left as it was
  bool ended = false;         // it ended while watched; its exit status is its parent's to read
  std::vector<int> running_at_end;  // processes of its tree alive when the watch ended
};

// Why the watchdog called time on a tree: its deadline passed; its processes kept failing at
// start (LaunchSpec::end_after_start_failures); the whole tree (kStall), or one process that can
// never go on (kStuck), had been still for LaunchSpec::hang_after_s; an announced step overran
// beside a process proven stuck (kStep). kNo: it never did.
enum class TimeCalled { kNo, kDeadline, kStartFailures, kStall, kStuck, kStep };

struct ChildResult {
  bool started = false;
  std::string start_error;  // why it could not be started
  std::string started_via;  // "exec", "zygote" or "attach"
  std::string start_note;   // why a zygote was asked for and not used
  int pid = -1;
  ExitStatus exit;
  double duration_s = 0;
  double timeout_s = 0;  // the deadline it ran under
  // Why the watchdog called time (once at most); its facts are beside it: step_hang (kStep),
  // failing_at_start (kStartFailures), hang_after_s and stuck (kStall, kStuck), and for every
  // reason tree and called_after_s.
  TimeCalled called_for = TimeCalled::kNo;
  std::optional<StepHang> step_hang;
  TreeFacts tree;  // as of the call (deadline or stall), else as of its end
  double called_after_s =
      -1;  // when time was called (deadline or stall), from the start; -1: never
  bool sent_sigterm = false;
  bool sent_sigkill = false;
  std::vector<int> leftovers_killed;     // processes of its tree still alive after it ended
  std::vector<int> leftovers_surviving;  // of those, still alive after every round of SIGKILL
  std::vector<int> group_strangers;      // in its process group but not of its tree: spared
  double hang_after_s = 0;               // LaunchSpec::hang_after_s, for the report
  // Time was called because its processes kept failing at start (end_after_start_failures):
  // why, in words; "" otherwise.
  std::string failing_at_start;
  // A process of the tree that could never go on by itself when time was called (stuck for a
  // stall window at least): with it, a tree still working elsewhere is a hang (a partial
  // deadlock), not a timeout.
  std::optional<ProcessStall> stuck;
  std::optional<StallNote> stall;  // the first stall of a live-watched tree (note_stalls)
  Stacks stall_stacks;             // its stacks, taken then, with the tree left running
  double starved_noted_s = 0;      // how long it had wanted a CPU when starvation was first said
  double paused_s = 0;             // forkcheck and the tree were stopped (Ctrl-Z) this long in all
  int interrupted_by = 0;          // forkcheck was interrupted by this signal while it ran
  Capture out, err;
  std::optional<nlohmann::json> result;  // the case's result message, when one came
  nlohmann::json early_details = nlohmann::json::object();  // details sent before the result
  nlohmann::json steps = nlohmann::json::array();
  size_t bad_channel_lines = 0;
  std::string bad_channel_line;  // the first one, control bytes escaped, at most 1 KiB
  std::string bad_channel_why;
  Stacks stacks;  // of a hung tree, taken before it was killed
  // Who waited on whom when time was called (wait_graph.h), and the chain from the program's
  // process; `waits.read` false when time was never called (or not on Linux: why_not).
  WaitGraphFacts waits;
  WaitChain wait_chain;
  // Each time forkcheck signalled a process of the tree to look at it (asked it for its stacks,
  // or attached a debugger), from the start, the same act told once per process and burst: a
  // death soon after may be forkcheck's doing, and is never said to be the program's own.
  struct LookSignal {
    int pid = 0;
    std::string what;  // "asked one of its threads for its stack", "attached eu-stack to it"
    double at_s = 0;
  };
  std::vector<LookSignal> look_signals;
  // What the tree's Python processes said through the bootstrap (PythonChannel::facts()); null
  // when none did. `python_note`: why the bootstrap could not be offered, when it could not.
  nlohmann::json python;
  std::string python_note;
  // LaunchSpec::watch_memory: each process's memory (first, peak, last), the OOM kills and
  // counters (MemoryWatch::record()); null otherwise.
  nlohmann::json memory;
  std::optional<AttachedWatch> attached;  // LaunchSpec::attach_pid
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
