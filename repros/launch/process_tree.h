// A process tree as the OS shows it: each process's identity (pid and start time), its parent,
// group and session, and each thread's CPU time. What the supervisor and the pools need to tell
// a tree that is working from one that is blocked, and to find every process of a tree, also
// those that left its process group or session. The siblings: process_tree_linux.cc (/proc),
// process_tree_mac.cc (libproc), process_tree_win32.cc (Toolhelp and GetProcessTimes).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <forkcheck/launch.h>

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
  std::string name;  // its command name (Linux: comm, at most 15 bytes); "" where not read
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

// One thread as the OS shows it at a look.
struct ThreadFacts {
  std::uint64_t cpu_ns = 0;  // CPU time used so far
  // Time spent runnable but waiting for a CPU, so far (Linux: schedstat's run_delay). It grows
  // only when the thread gets a CPU again: a thread starved outright shows as state 'R' instead.
  std::uint64_t run_delay_ns = 0;
  bool run_delay_known = false;
  // Linux's letters: R runnable (running or waiting for a CPU), S sleeping, D uninterruptible, T
  // stopped by a signal, t stopped by a tracer, Z zombie; '?' where the OS does not say (Windows).
  char state = '?';
};

// Each thread of `pid`, by thread id. Linux: every thread's schedstat (CPU and run-queue wait,
// exact) and state, else its stat (clock ticks); macOS: the process's total under thread id 0,
// 'R' while a thread of it is runnable; Windows: the process's total CPU under thread id 0.
// Empty when it is gone.
std::map<int, ThreadFacts> thread_facts(ProcessId pid);

// What a blocked thread waits in, from the system call it sleeps in (Linux:
// /proc/PID/task/TID/syscall; nullopt elsewhere, or when it is not in one or may not be read).
struct ThreadWait {
  long syscall = -1;
  // Its six arguments as the kernel shows them (a file descriptor, a child's pid, a futex's
  // address); `args_known` false where /proc showed none.
  std::array<std::uint64_t, 6> args{};
  bool args_known = false;
  // For a restart_syscall: the call it resumes, where the kernel shows it (poll, whose arguments
  // are then still in `args`); -1 otherwise.
  long resumed = -1;
  // A futex wait (FUTEX_WAIT, _WAIT_BITSET, _LOCK_PI, _LOCK_PI2, _WAIT_REQUEUE_PI) with no timeout,
  // on a word only the process itself can wake: one it flagged private (FUTEX_PRIVATE_FLAG), or
  // one on a private anonymous page (the kernel keys a futex there by the process's memory, not
  // by a file: /proc/PID/pagemap says the page is neither a file's nor shared), as libstdc++'s
  // static-init guard is. Only a thread of the same process (or a signal) can end it.
  // `futex_word` is its address.
  bool untimed_private_futex = false;
  std::uint64_t futex_word = 0;
  // pause() or sigsuspend() in a process that catches no signal (/proc/PID/status: SigCgt 0):
  // only a handler returning ends either, and there is none to run: nothing but the process's
  // death ends the wait (a client loop that ignores SIGTERM and pauses, for one).
  bool pause_without_handler = false;
  // pause() or sigsuspend(), handler or not: a wait that any caught signal ends (never
  // restarted), so a process that asks the thread anything by a signal ends its wait.
  bool ended_by_any_signal = false;
  // A wait with a timeout, which ends by itself: nanosleep, clock_nanosleep, a futex wait with a
  // timeout, poll or epoll_wait with one of 0 or more, select, pselect6, ppoll, epoll_pwait2,
  // rt_sigtimedwait, semtimedop or futex_waitv with one, and restart_syscall (a timed wait
  // resumed after a signal: an untimed one is restarted as itself). A socket read under
  // SO_RCVTIMEO is not seen as timed. `ends_in_s`: how long until it ends, as of the read:
  // exactly for an absolute timeout (Python 3.11+'s time.sleep, a threading wait with a
  // timeout: `ends_in_exact`), at most for a relative one (the length asked for, read from the
  // process's memory: it began before the read); -1 where not known.
  bool timed = false;
  double ends_in_s = -1;
  bool ends_in_exact = false;
};
std::optional<ThreadWait> thread_wait(ProcessId pid, int tid);
// thread_wait, or what a test gives in its place.
using ThreadWaitReader = std::function<std::optional<ThreadWait>(ProcessId, int tid)>;

// One look at a tree: every process reachable from `roots` through child links, with each
// thread's CPU time. Processes that end while they are looked at are left out.
struct TreeLook {
  struct Process {
    ProcessFacts facts;
    std::map<int, ThreadFacts> threads;  // by thread id
  };
  std::chrono::steady_clock::time_point at;
  std::map<ProcessId, Process> processes;
  std::size_t thread_count() const;
};
TreeLook look_at_tree(const std::vector<ProcessId>& roots);

// What happened between two looks at one tree: CPU used by threads seen in both (a new thread's
// whole time counts, it began since), and whether any process or thread came or went (a
// process turning zombie counts: it exited). Whether a thread wanted a CPU it did not get: one
// runnable at both looks that did not run between (starved outright: its run-queue wait is
// counted only once it runs), or one whose run-queue wait grew by a quarter of the interval or
// more (it got a CPU now and then, and waited long for it). A poller caught runnable at one look
// is neither. And whether a process was stopped (T) or traced (t) at the later
// look: neither is a process blocked in its own code.
struct TreeChange {
  std::uint64_t cpu_ns = 0;
  bool membership_changed = false;
  bool wanted_cpu = false;
  std::uint64_t run_delay_ns = 0;  // run-queue wait of threads seen in both looks
  bool stopped = false;
};
TreeChange compare_looks(const TreeLook& before, const TreeLook& after);

}  // namespace fc::launch
