// Whether a system call a thread sleeps in has a timeout, and how long until it ends
// (process_tree.h: ThreadWait::timed). Linux, x86_64 and aarch64; elsewhere nothing is timed.
#pragma once

#include <cstdint>
#include <string>

#include "launch/process_tree.h"

namespace fc::launch {

// `nr` and `arg`: the system call and its six arguments as /proc/PID/task/TID/syscall shows them.
// `wchan`: the kernel function the thread sleeps in (/proc/PID/task/TID/wchan), which tells what
// a restart_syscall resumed; read only for one.
void read_timed_wait(ProcessId pid, long nr, const std::uint64_t (&arg)[6],
                     const std::string& wchan, ThreadWait& w);

}  // namespace fc::launch
