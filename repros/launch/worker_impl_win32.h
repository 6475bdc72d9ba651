// Worker::Impl on Windows: the parent's side of one spawned worker (spawn is the only start
// method there). It holds the worker's process handle and the read end of its result pipe.
// join() and join_any() wait on the process handles (WaitForMultipleObjects, every worker at
// once) in slices growing from 1 to 50 ms and drain the pipes between them: an anonymous pipe
// cannot be waited on, and a result larger than the pipe's buffer would otherwise stall the
// worker before it can end.
//
// How a worker ended, without signals: exit code 0 with a result is kOk; a result saying
// "error", or another exit code, is kError; an exception code such as 0xC0000005 (access
// violation) as the exit code is kCrash, with exit_code holding it and error naming it; a worker
// ended by terminate() is kCrash with signal SIGTERM, as Python reports a terminated process on
// Windows (-SIGTERM).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "launch/win32.h"

namespace fc::launch {

class Worker::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  Impl(std::string name, win32::Handle process, ProcessId pid, win32::Handle result_read,
       Clock::time_point started);
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // A worker still running is terminated and waited for.
  ~Impl();

  ProcessId pid() const { return pid_; }
  const std::string& name() const { return name_; }
  StartMethod method() const { return StartMethod::kSpawn; }

  std::optional<WorkerOutcome> join(std::chrono::milliseconds timeout);
  // TerminateProcess at once: it is no request a worker could handle, so `grace` has nothing to
  // wait for and the end is never "forced".
  WorkerOutcome terminate(std::chrono::milliseconds grace);

  // launch::join_any: the positions in `impls` of those that ended within `timeout`.
  static std::vector<std::size_t> wait_any(const std::vector<Impl*>& impls,
                                           std::chrono::milliseconds timeout);

 private:
  // Drains every worker's result pipe and waits for their processes until one or more has
  // ended or `deadline` (none: forever) passes; their positions in `impls`.
  static std::vector<std::size_t> wait_any_until(const std::vector<Impl*>& impls,
                                                 std::optional<Clock::time_point> deadline);
  // wait_any_until for this worker alone; true once it ended.
  bool wait_for_end(std::optional<Clock::time_point> deadline);
  // Checks for the end without waiting (and then drains the pipe); true once it ended.
  bool ended_now();
  // Takes what the result pipe holds now; true when it held something.
  bool drain_result();
  const WorkerOutcome& finish();

  std::string name_;
  win32::Handle process_;
  ProcessId pid_;
  Clock::time_point started_;
  Clock::time_point ended_at_{};
  win32::Handle result_;
  std::string result_text_;
  bool ended_ = false;
  bool terminated_ = false;
  DWORD exit_code_ = 0;
  std::optional<WorkerOutcome> outcome_;
};

}  // namespace fc::launch
