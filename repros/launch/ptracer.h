// Letting forkcheck's debugger attach to every process of a repro tree under Yama.
//
// With Yama's ptrace_scope=1 (Ubuntu's default, and many CI images'), a process may be traced only
// by its ancestors, or by the process it named with prctl(PR_SET_PTRACER, pid) and that process's
// descendants. forkcheck's debugger (eu-stack, gdb) is forkcheck's child: a sibling of the hung
// tree, not an ancestor. So forkcheck exports FORKCHECK_PTRACER=<its own pid> and names itself in
// the process it execs (the declaration belongs to the task and survives execve: Yama drops it only
// when the task is freed or the declaration is replaced), and every process this library starts
// names it again, because a fork child is a new task without one (Yama has no fork hook). Spawned
// workers make it in init(), fork and forkserver workers right after their fork, the forkserver
// itself when it starts.
#pragma once

namespace fc::launch {

// prctl(PR_SET_PTRACER, $FORKCHECK_PTRACER) for this process. Does nothing when the variable was
// unset or not a pid, on a kernel without Yama (the call fails with EINVAL, which is ignored, as
// is a supervisor already gone), and off Linux. Async-signal-safe, for a fork child: the
// variable is read once, while the program loads, before main() can fork; errno is preserved.
void allow_supervisor_ptrace() noexcept;

// The pid FORKCHECK_PTRACER held when the program loaded; 0 when none (and always off Linux).
int supervisor_ptracer() noexcept;

}  // namespace fc::launch
