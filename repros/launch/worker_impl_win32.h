// Worker::Impl on Windows: the parent's side of one spawned worker (spawn is the only start
// method there). It holds the worker's process handle and the read end of its result pipe.
// join() waits on the process handle (WaitForSingleObject) in short slices and drains the pipe
// between them: a result larger than the pipe's buffer would otherwise stall the worker before
// it can end.
//
// How a worker ended, without signals: exit code 0 with a result is kOk; a result saying
// "error", or another exit code, is kError; an exception code such as 0xC0000005 (access
// violation) as the exit code is kCrash, with exit_code holding it and error naming it; a worker
// ended by terminate() is kCrash with signal SIGTERM, as Python reports a terminated process on
// Windows (-SIGTERM).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "launch/launch.h"
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

 private:
  // Drains the result pipe and waits for the process until `deadline` (none: forever); true
  // once it ended.
  bool wait_for_end(std::optional<Clock::time_point> deadline);
  void drain_result();
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
