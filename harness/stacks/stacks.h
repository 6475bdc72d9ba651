// Stacks of a hung process tree, taken before the watchdog kills it: every thread of every
// process, with function names. eu-stack or gdb where installed and allowed to attach; where both
// are missing or attaching is refused (Yama ptrace_scope, no CAP_SYS_PTRACE), what the OS gives
// (thread names, states, and on Linux wait channels: /proc; macOS: libproc), and the report says
// why. Windows: dbghelp's StackWalk64 (dbghelp_win32.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/platform/process_id.h"

namespace fc::harness {

struct StackFrame {
  std::string function;  // "GOMP_parallel", "??" when unknown
  std::string where;     // "at file.cc:12" or "from /lib/.../libgomp.so.1"
};

// A frame of the Python code a thread runs (CPython's own view, from its gdb extension's py-bt).
struct PyFrame {
  std::string file;  // "/home/u/train.py"; "" for a built-in ("<built-in method acquire ...>")
  int line = 0;
  std::string function;  // "main", or the built-in's description
  std::string code;      // the source line, when gdb could read the file
};

struct ThreadStack {
  int pid = 0;
  int tid = 0;
  std::string name;
  std::string state;    // from the OS: S (sleeping), R, D, T...
  std::string wchan;    // the kernel function it waits in, from /proc (Linux only)
  std::string syscall;  // the system call it is blocked in ("futex", "wait4"), from /proc (Linux)
  std::vector<StackFrame> frames;
  std::vector<PyFrame> python;  // innermost first; empty unless a Python interpreter's thread
};

struct Stacks {
  std::string method;  // "eu-stack", "gdb", "proc", "dbghelp" (Windows), or "none"
  std::string note;    // why the method was what it was (e.g. why gdb could not attach)
  // For a tree with Python interpreters in it: how their Python frames were read, or why not
  // (no gdb, no CPython gdb extension or debug symbols). Empty when no process runs Python.
  std::string python_note;
  std::vector<ThreadStack> threads;
};

// How far a debugger may go with one process (the watchdog decides: supervise/watchdog.h).
enum class Attach {
  kNone,   // what the OS says only (/proc): the process may be working
  kBrief,  // asleep: a quick attach (eu-stack), killed and the process released past its budget
  kLong,   // stuck, or about to be ended: any debugger (gdb with Python frames), within the budget
};

struct StacksRequest {
  // Every process to describe, and how far a debugger may go with it. A Python process whose
  // bootstrap answers (python_dumps below) gives its Python frames itself, whatever the Attach.
  std::map<ProcessId, Attach> processes;
  bool ending = false;   // time was called: the tree is ended once they are in
  double budget_s = 0;   // all of it, from now
  double brief_s = 1.5;  // one brief attach, at most
  // Each frame's source file and line where there is debug information (eu-stack -s): what a
  // user's own program wants ("dead.c:5"); reading it costs eu-stack a tenth of a second more per
  // process, which the catalog's hangs, whose functions name them, do without.
  bool source_lines = true;
  // forkcheck attach: the tree was not started by forkcheck, so a Python process of it has the
  // bootstrap only where its job was started with `forkcheck attach --env`'s lines (said where
  // its Python frames could not be had otherwise).
  bool attached = false;
};

// gdb reading a Python process's frames takes seconds (1.4 s for a plain python3 here, 4 to 6 s
// where libtorch is loaded): with less than this left, eu-stack's native frames are taken instead.
inline constexpr double kGdbNeedsS = 2.0;

#ifdef _WIN32
// Every thread of `pids`, within about `time_limit_s` overall (dbghelp_win32.cc), from the
// supervisor's loop; it stops early once `give_up` says so (the supervisor's: an interrupt). On
// POSIX the supervisor takes them beside its other children instead (supervise/stack_taking.h).
Stacks collect_stacks(const std::vector<ProcessId>& pids, double time_limit_s,
                      const std::function<bool()>& give_up);
#endif

// Parses `gdb -batch -ex "thread apply all bt"` output for process `pid`.
std::vector<ThreadStack> parse_gdb_backtraces(const std::string& text, int pid);

// Parses gdb's `thread apply all py-bt` output (CPython's gdb extension) into the Python frames
// of `threads` (matched by LWP); returns how many threads got frames. `missing` gets gdb's reason
// when py-bt itself is unknown or found no interpreter state ("" otherwise).
size_t parse_gdb_py_backtraces(const std::string& text, std::vector<ThreadStack>& threads,
                               std::string& missing);

// Whether `pid` runs a CPython interpreter (its executable is named python*, or it maps
// libpython), and the interpreter's file; "" when not.
std::string python_interpreter(ProcessId pid);

// What CPython's faulthandler wrote: each thread's Python frames (innermost first, as it lists
// them), by CPython's thread ident; `fatal` is the fatal error it reported ("Segmentation fault"),
// or "" for a dump on demand.
struct PyDumpThread {
  std::uint64_t ident = 0;  // CPython's (pthread_self); 0 in a one-thread dump
  int tid = 0;              // the OS thread id, where it is known (forkcheck asked that thread)
  bool current = false;     // the thread that received the signal
  std::string name;         // when the dump names it (later CPythons)
  std::vector<PyFrame> frames;
};
struct PyDump {
  std::string fatal;
  std::vector<PyDumpThread> threads;
};
// The bootstrap's own frames (forkcheck_boot.py: the wrappers it puts around the calls it tells
// of, a thread's start on Python 3.6 and 3.7) are left out: they are nobody's code but ours.
PyDump parse_faulthandler_dump(const std::string& text);

// Parses `eu-stack -m -s -p PID` output (elfutils) for process `pid`.
std::vector<ThreadStack> parse_eu_stack(const std::string& text, int pid);

// "ns::f(int) const", "f (x=1)" -> "ns::f": the name without parameters or argument values.
std::string function_name_only(const std::string& s);

// What the OS says about each thread of `pid`: Linux's /proc (no frames unless
// /proc/PID/task/TID/stack is readable, which needs root), macOS's libproc (names and states).
std::vector<ThreadStack> proc_threads(ProcessId pid);
// The name of system call `nr` as Linux numbers it on this machine ("clock_nanosleep"), for the
// calls a blocked thread is found in; "syscall N" for others and elsewhere.
std::string syscall_name(long nr);

nlohmann::json to_json(const Stacks& s);

// What the threads of `threads` wait in, counted: "futex (5), wait4 (1), running (1)": each
// thread's system call, else its wait channel, else its state. Empty when nothing is known.
std::string waiting_in(const std::vector<ThreadStack>& threads);

}  // namespace fc::harness
