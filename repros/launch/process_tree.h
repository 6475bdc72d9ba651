// A process tree as the OS shows it: each process's identity (pid and start time), its parent,
// group and session, and each thread's CPU time. What the supervisor and the pools need to tell
// a tree that is working from one that is blocked, and to find every process of a tree, also
// those that left its process group or session. The siblings: process_tree_linux.cc (/proc),
// process_tree_mac.cc (libproc), process_tree_win32.cc (Toolhelp and GetProcessTimes).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "launch/launch.h"

namespace fc::launch {

struct ProcessFacts {
  ProcessId pid = 0;
  ProcessId ppid = 0;
  ProcessId pgid = 0;
  ProcessId sid = 0;
  // When it started, in the OS's unit (Linux: clock ticks since boot): with the pid, it names one
  // process for good, since a pid is reused only by a process that starts later.
  std::uint64_t start_time = 0;
  char state = '?';  // Linux's letters: R running, S sleeping, D disk wait, T stopped, Z zombie
  bool zombie() const { return state == 'Z' || state == 'X'; }
};

// What the OS says about `pid` now, zombies included; nullopt when there is no such process or
// it may not be looked at.
std::optional<ProcessFacts> process_facts(ProcessId pid);

// The children of `pid` (of every thread of it). Linux: /proc/PID/task/TID/children, else a scan
// of every process's parent; macOS: proc_listchildpids; Windows: a Toolhelp snapshot, children
// that started before their parent (a reused parent id) left out.
std::vector<ProcessId> child_processes(ProcessId pid);

// Every process's children at once, from one pass over the process table, where asking per
// process would cost a pass each (Linux without /proc/PID/task/TID/children); nullopt where
// child_processes is used instead (Linux with them, macOS, Windows).
std::optional<std::multimap<ProcessId, ProcessId>> all_children();

// The CPU time each thread of `pid` has used, in nanoseconds, by thread id. Linux: every
// thread's schedstat (exact), else its stat (clock ticks); macOS and Windows: the process's
// total under thread id 0. Empty when it is gone.
std::map<int, std::uint64_t> thread_cpu_ns(ProcessId pid);

// One look at a tree: every process reachable from `roots` through child links, with each
// thread's CPU time. Processes that end while they are looked at are left out.
struct TreeLook {
  struct Process {
    ProcessFacts facts;
    std::map<int, std::uint64_t> threads;  // thread id -> CPU ns
  };
  std::chrono::steady_clock::time_point at;
  std::map<ProcessId, Process> processes;
  std::size_t thread_count() const;
};
TreeLook look_at_tree(const std::vector<ProcessId>& roots);

// What happened between two looks at one tree: CPU used by threads seen in both (a new thread's
// whole time counts, it began since), and whether any process or thread came or went (a
// process turning zombie counts: it exited).
struct TreeChange {
  std::uint64_t cpu_ns = 0;
  bool membership_changed = false;
};
TreeChange compare_looks(const TreeLook& before, const TreeLook& after);

}  // namespace fc::launch
