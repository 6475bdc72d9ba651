// Reaps every child of the harness in one place: the children it started and, on Linux, where the
// harness makes itself a child subreaper, the orphans of their trees that the kernel re-parents to
// it (macOS has no subreaper: launchd reaps those).
// SIGCHLD wakes the supervisor's poll loop through a self-pipe.
// A child may be held: once it exits its status is known (take()), but it stays an unreaped zombie
// until release(), so that its pid, and the id of the process group it leads, cannot be reused
// meanwhile: the supervisor can still signal that group as a whole while it ends what the child
// left behind. Every child of this process is the Reaper's: it reaps them all, so a program that
// embeds the supervisor starts no child of its own that it means to wait for.
// On Windows (reaper_win32.cc) there are no zombies to reap, the supervisor waits on process
// handles: reap() and take() do nothing there, and wake_from_signal_handler() sets an event.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "harness/platform/process_id.h"

namespace fc::harness {

class Reaper {
 public:
  static Reaper& instance();

  int wake_fd() const { return wake_read_; }  // readable after a SIGCHLD (POSIX; -1 on Windows)
  void watch(ProcessId pid);                  // keep this child's status for take() (afresh)
  void unwatch(ProcessId pid);                // its status no longer wanted
  void hold(ProcessId pid);                   // watch(), and leave it unreaped until release()
  void release(ProcessId pid);                // reap a held child (once it has exited)
  void reap() { reap_exited(false); }         // every exited child but the held ones
  std::optional<int> take(ProcessId pid);     // the raw wait status, once it exited
  static void wake_from_signal_handler();     // async-signal-safe: makes wake_fd() readable
  // Waits up to `wait_s` for a helper child of ours (pid and start time: a process it started
  // that no tree holds, the guardian or a zygote) to end, kills it if it does not, and reaps it.
  // Signals only through a handle, so a pid reused after an earlier reap is never touched.
  void end_child(ProcessId pid, std::uint64_t start_time, double wait_s);
  // Children reaped that nobody watched (the orphans of supervised trees, re-parented to us):
  // each with its start time and the CPU it used (its own and its reaped children's), so that the
  // work of a process that lived and died between two looks still counts for its tree. Taken
  // once; Windows: none.
  struct Reaped {
    ProcessId pid = 0;
    std::uint64_t start_time = 0;
    std::uint64_t cpu_ns = 0;
  };
  std::vector<Reaped> take_reaped();

 private:
  Reaper();
  // `walk`: look at every child even if no SIGCHLD came since the last look.
  void reap_exited(bool walk);
  int wake_read_ = -1;
};

}  // namespace fc::harness
