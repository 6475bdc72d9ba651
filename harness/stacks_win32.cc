// Stacks of a hung tree are not collected on Windows. Walking another process's
// stacks there means suspending each of its threads and running dbghelp's
// StackWalk64 with its symbols (PDB files the user's program and libtorch may
// not ship), or driving a debugger such as cdb, which is not installed by
// default; neither is wired in yet. The report says "none" and why, and the
// hang itself is still recognised and reported.
#include "harness/stacks.h"

namespace fc::harness {

Stacks collect_stacks(const std::vector<ProcessId>&, double) {
  Stacks s;
  s.method = "none";
  s.note =
      "not supported on Windows: forkcheck has no Windows stack walker "
      "yet (it would need "
      "dbghelp's StackWalk64 with symbols, or a debugger such as cdb), so "
      "the hang is "
      "reported without stacks";
  return s;
}

// No /proc: no thread states or wait channels to read.
std::vector<ThreadStack> proc_threads(ProcessId) { return {}; }

}  // namespace fc::harness
