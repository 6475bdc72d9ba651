// Stacks of a hung tree taken while the supervisor goes on watching everything else: one
// debugger command per process of the tree, run as the supervisor's own children, then the
// stacks from what they printed. POSIX only (Windows walks them with dbghelp in the supervisor's
// own loop: stacks_win32.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/stacks/stacks.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

class StackTaking {
 public:
  // Chooses the debugger (FORKCHECK_STACKS, eu-stack, gdb) for `pids`; all of them are to run at
  // once, within `budget_s` in all.
  StackTaking(const std::vector<ProcessId>& pids, double budget_s);

  // The debugger commands, one per process; empty when the stacks need none (no debugger, no
  // process, FORKCHECK_STACKS=none or proc): complete() is then true at once.
  const std::vector<LaunchSpec>& commands() const { return commands_; }

  // Command `i` ended (or could not start) with `r`.
  void add_result(size_t i, const ChildResult& r);

  bool complete() const { return pending_ == 0; }

  // The stacks: once complete(), or earlier (an interrupt, the budget spent: `why_short` says
  // which), with what /proc says of the processes whose debugger had not finished, and a note
  // naming them.
  Stacks take(const std::string& why_short = "forkcheck was interrupted before the debugger finished");

 private:
  struct Debugger {
    std::string name;  // "eu-stack" or "gdb": also the report's stacks method
    std::string path;
  };
  std::vector<ProcessId> pids_;
  double time_limit_s_;
  std::optional<Debugger> debugger_;
  std::vector<LaunchSpec> commands_;
  size_t pending_ = 0;
  std::vector<bool> answered_;
  std::vector<std::string> refused_;
  std::map<ProcessId, std::vector<ThreadStack>> before_attach_;  // the OS's view, before debuggers
  std::vector<bool> with_python_;  // command i is gdb with py-bt (a Python interpreter)
  size_t python_processes_ = 0, python_read_ = 0;
  std::string python_why_;  // why a Python process's frames were not read (the last reason)
  Stacks stacks_;
};

}  // namespace fc::harness
