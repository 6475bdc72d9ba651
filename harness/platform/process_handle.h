// A process forkcheck may signal, held so that a signal never reaches a stranger that got its pid
// later. Linux (5.3 and later): a pidfd, which names one process for good; pidfd_send_signal to
// one that was reaped fails with ESRCH. Elsewhere (macOS, older kernels): the pid and its start
// time, checked just before each signal; a pid is reused only by a process that starts later, so
// the check leaves a window of microseconds, and only for processes that are not our children
// (ours are never reaped behind our back: see supervise/reaper.h).
#pragma once

#include <cstdint>
#include <optional>

#include "harness/platform/process_id.h"

namespace fc::harness {

class ProcessHandle {
 public:
  // `pid`, if it is still the process that started at `start_time` (launch::ProcessFacts); the
  // check comes after the pidfd is opened, so the handle can only name that process.
  static std::optional<ProcessHandle> open(ProcessId pid, std::uint64_t start_time);

  ProcessHandle(ProcessHandle&& o) noexcept;
  ProcessHandle& operator=(ProcessHandle&& o) noexcept;
  ProcessHandle(const ProcessHandle&) = delete;
  ProcessHandle& operator=(const ProcessHandle&) = delete;
  ~ProcessHandle();

  ProcessId pid() const { return pid_; }
  std::uint64_t start_time() const { return start_time_; }
  int pidfd() const { return pidfd_; }  // -1 without one

  // Sends `sig`; false when the process is gone. Never delivered to another process.
  bool signal(int sig) const;
  // Whether it has ended (exited or been killed, reaped or not).
  bool ended() const;

 private:
  ProcessHandle(ProcessId pid, std::uint64_t start_time, int pidfd)
      : pid_(pid), start_time_(start_time), pidfd_(pidfd) {}
  ProcessId pid_ = -1;
  std::uint64_t start_time_ = 0;
  int pidfd_ = -1;
};

}  // namespace fc::harness
