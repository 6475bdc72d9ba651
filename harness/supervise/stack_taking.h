// Stacks of a tree taken while the supervisor goes on watching everything else: one debugger
// command per process it may attach to (StacksRequest: how far it may go with each), run as the
// supervisor's own children, then the stacks from what they printed; what the OS says for the
// rest. POSIX only (Windows walks them with dbghelp in the supervisor's own loop:
// dbghelp_win32.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/stacks/stacks.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

class StackTaking {
 public:
  // Chooses a debugger (FORKCHECK_STACKS, eu-stack, gdb) for each process the request lets one
  // attach to: eu-stack for a brief look (a fraction of a second), gdb with CPython's extension
  // where it may stop the process long (Attach::kLong) and it runs Python, else eu-stack. Reads
  // what the OS says of every thread first, before any debugger attaches.
  // `python_dumping`: the processes whose Python bootstrap was asked for its stacks (they come by
  // add_python_dump): gdb is not needed for their Python frames.
  explicit StackTaking(const StacksRequest& request,
                       const std::set<ProcessId>& python_dumping = {});

  // The debugger commands, one per process attached to (each with its own budget); empty when
  // the stacks need none: complete() is then true at once.
  const std::vector<LaunchSpec>& commands() const { return commands_; }
  ProcessId target(size_t i) const { return targets_.at(i); }
  // What the OS said of the threads of each process before any debugger attached (a thread
  // under a debugger of ours is in ptrace_stop, which is not where the program waits).
  const std::map<ProcessId, std::vector<ThreadStack>>& before_attach() const {
    return before_attach_;
  }

  // Command `i` ended (or could not start) with `r`.
  void add_result(size_t i, const ChildResult& r);
  // What `pid` answered when asked for its Python stacks (python_stacks_ask.h; no thread when it
  // did not answer), its threads by CPython's ident (OS thread id and name, from the bootstrap's
  // thread events), and a line for each thread whose stack it could not read, saying why.
  struct PyThreadName {
    int native_id = 0;
    std::string name;
  };
  void add_python_dump(ProcessId pid, PyDump dump,
                       const std::map<std::uint64_t, PyThreadName>& threads,
                       std::vector<std::string> unread = {});
  const std::set<ProcessId>& python_dumping() const { return python_dumping_; }
  // A process whose bootstrap was found but not asked, and why (forkcheck attach: its files are
  // its parent's, or name another signal).
  void python_not_asked(ProcessId pid, const std::string& why) {
    unread_.push_back("pid " + std::to_string(pid) + ": its bootstrap was not asked: " + why);
  }

  bool complete() const { return pending_ == 0 && dumps_pending_ == 0; }

  // The stacks: once complete(), or earlier (an interrupt, the budget spent: `why_short` says
  // which), with what /proc says of the processes whose debugger had not finished, and a note
  // naming them.
  Stacks take(
      const std::string& why_short = "forkcheck was interrupted before the debugger finished");

 private:
  struct Command {
    ProcessId pid = 0;
    std::string debugger;  // "eu-stack" or "gdb": also the report's stacks method
    bool python = false;   // gdb with py-bt (a Python interpreter)
    double budget_s = 0;
  };
  std::vector<Command> planned_;
  std::vector<ProcessId> targets_;
  std::vector<LaunchSpec> commands_;
  size_t pending_ = 0;
  std::vector<bool> answered_;
  std::vector<std::string> refused_;  // per process: why no debugger's stacks
  std::set<std::string> methods_;     // the debuggers whose stacks came in
  std::map<ProcessId, std::vector<ThreadStack>> before_attach_;  // the OS's view, before debuggers
  size_t python_processes_ = 0, python_read_ = 0;
  std::string python_why_;  // why a Python process's frames were not read (the last reason)
  std::string none_why_;    // why no debugger was used at all
  bool attached_ = false;   // StacksRequest::attached
  std::set<ProcessId> python_dumping_;
  size_t dumps_pending_ = 0;
  struct Dump {
    PyDump dump;
    std::map<std::uint64_t, PyThreadName> threads;
  };
  std::vector<std::string> unread_;  // threads whose Python stacks were not read, and why
  std::map<ProcessId, Dump> dumps_;  // by process, merged into the threads in take()
  Stacks stacks_;
};

}  // namespace fc::harness
