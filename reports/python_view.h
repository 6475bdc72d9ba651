// What a program's Python processes told forkcheck's bootstrap (a variant's "python": every
// process's hello, threads, forks, exceptions, children's ends, crash dumps), and what its stderr
// shows when they could not tell (a traceback), as every format says it. Like report_view.h, it
// reads the report and nothing else.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

namespace fc::reports {

// A Python frame as the reports show it: "train.py:34 in main".
std::string python_frame_text(const PythonFrame& frame);

// Whether `file` is the user's own code rather than the standard library's or an installed
// package's (`paths`: the process's sysconfig paths when its bootstrap sent them; else the usual
// places: .../lib/pythonX.Y/, site-packages, dist-packages, <frozen ...>).
bool users_file(const std::string& file, const PythonPaths* paths = nullptr);

// An exception as it ended a process: its type, message and frames (innermost last).
struct PythonError {
  std::string type, message;
  std::vector<PythonFrame> frames;
  std::optional<PythonPaths> paths;  // the process's, when known
};

// The last Python traceback printed on `stderr` (what the program wrote, captured), when there
// is one: the last of a chain ("During handling of the above exception ..."), caret lines (3.11's
// "^^^^") left out.
std::optional<PythonError> traceback_in(const std::string& stderr_text);

// The exception that ended the program (the bootstrap's record of its main process, else the last
// traceback on its stderr), or nothing.
std::optional<PythonError> program_error(const Variant& variant);

// A traceback as Python prints it, within `max_bytes`: every frame in the user's own files whole
// (with its source line), runs of library frames left out first ("... 12 frames in libraries")
// when it must be shorter, then the exception's line.
std::string traceback_text(const PythonError& error, size_t max_bytes);

// "train.py:34 in main: ConnectionResetError: [Errno 104] Connection reset by peer": the
// exception that ended the program, at its deepest frame in the user's own files (else its
// deepest frame), from the bootstrap's record of the main process, else from a traceback on
// stderr; "" when neither has one.
std::string error_headline(const Variant& variant);

// The program's main Python process (the root of the tree, else the first that started by
// exec), or nullptr.
const PythonProcess* main_python_process(const Variant& variant);

// "crash.py:4 in <module>": the Python line a process of the tree died on, from faulthandler's
// dump at the fatal signal ("" when there is none). `pid` 0: the main process.
std::string crash_line(const Variant& variant, int pid = 0);

// A process of the tree, other than the program itself, that ended badly: killed by a signal,
// exited non-zero, or whose target raised.
struct DescendantEnd {
  int pid = 0;
  std::string what;   // "Process-1 (work)", "worker.py", ...
  std::string how;    // "killed by SIGSEGV", "exit status 1", "raised ValueError: bad row"
  std::string where;  // "worker.py:12 in work": its exception's or crash's deepest user frame
  // Where a crash's line came from: "the line from faulthandler's dump", and whose handlers it
  // was armed again over when a library replaced it.
  std::string where_from;
  // Why this end is not the program's failure ("" when it is): the program dealt with it ("ended
  // as the program asked: terminate() at t.py:9", "the program read its exit code
  // (Process.exitcode) at t.py:12 in test", "its end broke the ProcessPoolExecutor, ..."),
  // forkcheck may have caused it, whether it was looked at cannot be seen, or --worker-failures.
  std::string not_counted;
  std::string test;    // the test running in it, or in its parent as it ended (pytest's words)
  std::string memory;  // what its memory samples showed (memory_text.h), "" when never sampled
  bool parent_unseen = false;  // its parent is not a Python process of the tree
  // Not counted only because the program looked at its end (read its exit code, was given
  // BrokenProcessPool for it): --worker-failures fail counts it.
  bool only_looked = false;
  bool ended_by_program = false;  // a signal of the program's, or its terminate() or kill()
  bool after_look = false;        // died of a signal just after forkcheck signalled it: not counted
};
// The ends the program did not deal with: what fails a run whose program exited 0. A process
// that died of a signal within 2 s of forkcheck signalling it to look at it (asked it for its
// stacks, attached a debugger) is not among them: forkcheck may have caused it.
std::vector<DescendantEnd> failed_descendants(const Variant& variant);

// Every end of note but those forkcheck may have caused or the program itself caused, counted or
// not: the evidence a failure of the program's is explained by (a worker whose death broke the
// executor that then raised).
std::vector<DescendantEnd> ended_badly(const Variant& variant);

// The other ends of note (not exit 0), each with why it is not counted.
std::vector<DescendantEnd> uncounted_descendants(const Variant& variant);

// Those processes: "pid 4243 Process-2 (work) killed by SIGSEGV 100 ms after forkcheck asked one
// of its threads for its stack: forkcheck may have caused it, so it is not counted as the
// program's failure"; "" when there is none.
std::string deaths_after_look_text(const Variant& variant);

// Where the program named its own start method (get_context, set_start_method), as told by the
// bootstrap: "the program names its own start method: fork at train.py:9 in <module> (kept ...)";
// "" when it named none.
std::string own_start_method_choice(const Variant& variant);

// How Python process `pid` was born of a fork while other threads ran in its parent (the
// bootstrap's fork facts): "was forked at pool.py:10 in <module> by pid 41 while 1 other thread
// ran there: "holder" (started at pool.py:9 in <module>)"; "" when it was not, or it is not known.
std::string fork_with_threads(const Variant& variant, int pid);
// The fork entry of that fork (with other threads running), and its parent process; nullptr when
// the process was not born so, or it is not known.
const PythonFork* fork_with_threads_that_made(const Variant& variant, int pid,
                                              const PythonProcess** parent = nullptr);
// Whether multiprocessing made the fork (a frame of its own in the stack that forked: a Process
// or a Pool starting a worker under fork) rather than a bare os.fork(); unknown without a stack.
std::optional<bool> forked_by_multiprocessing(const PythonFork& fork);

// Whether a fork entry a process kept stands for its fork numbered `seq`: consecutive forks alike
// in all but time are folded into one entry, `seq` to `last_seq`.
bool fork_entry_covers(const PythonFork& fork, std::optional<long long> seq);
// The same of any entry with `first` and `last` (details.fork_guards' seq and last_seq).
bool fork_entry_covers(std::optional<long long> first, std::optional<long long> last,
                       std::optional<long long> seq);

// The test a test runner said runs in Python process `pid` (0: the program's main process) when
// it was last heard of: "tests/test_loader.py::test_workers (call)" (pytest's
// PYTEST_CURRENT_TEST), else unittest's test id; "" when none.
std::string running_test(const Variant& variant, int pid = 0);

// What the channel did not keep of the Python side, and why (python.dropped_by against its
// bounds): "not kept of what the Python side told: 12 forks past the 200 kept of a process
// (2000 of those made beside other threads)"; "" when all was kept.
std::string python_drops_text(const Variant& variant);

// "pid 4243 Process-2 (work) killed by SIGSEGV at crash.py:5": one of them, in a line.
std::string descendant_text(const DescendantEnd& d);

// "2 processes of it failed: pid 4242 Process-1 (work) raised ValueError: bad row at
// work.py:3; pid 4243 ... killed by SIGSEGV at crash.py:5"; "" when none did. The verdict fails
// a program that exited 0 with this (exit status 1); every format shows it.
std::string descendants_failure(const Variant& variant);

// "2 processes of it failed": descendants_failure() without its list; "" when none did.
std::string descendants_failure_count(const Variant& variant);

// Whether `variant` is a user's program whose own process exited 0, by itself (not a hang or a
// timeout), while processes of it failed (descendants_failure): its run is stored as outcome
// "error" with "exited 0, but ..." as its message (mark_processes_failed), and said in those
// words, never as ok.
bool exited_zero_but_processes_failed(const Variant& variant);

// Such a variant still recorded as ok (the run log keeps the program's own end): made an error,
// its message "exited 0, but N processes of it failed: ..." and what it said besides. Folding a
// run log does it (run_log.h), so that a log written before it was done reads the same.
void mark_processes_failed(nlohmann::json& record);

}  // namespace fc::reports
