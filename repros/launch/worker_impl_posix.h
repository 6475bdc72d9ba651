// Worker::Impl: the parent's side of one running worker, whatever started it. It drains the
// result pipe while it waits (a result may be larger than the pipe buffer) and learns how the
// worker ended from waitpid (fork, spawn: the worker is our child) or from the forkserver's
// status message (forkserver: the worker is the server's child). Waiting blocks in poll() on
// the result pipe and the pidfd or status socket, for one worker or many at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "launch/fdio_posix.h"

namespace fc::launch {

class Worker::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  // fork and spawn: `pid` is our own child, reaped here with waitpid.
  static std::unique_ptr<Impl> for_child(std::string name, StartMethod method, pid_t pid,
                                         detail::Fd result_fd, Clock::time_point started);
  // forkserver: the end arrives as a wait status over `status_fd`.
  static std::unique_ptr<Impl> for_forkserver(std::string name, pid_t pid, detail::Fd result_fd,
                                              detail::Fd status_fd, Clock::time_point started);

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // A worker still running is SIGKILLed and reaped.
  ~Impl();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  StartMethod method() const { return method_; }

  std::optional<WorkerOutcome> join(std::chrono::milliseconds timeout);
  WorkerOutcome terminate(std::chrono::milliseconds grace);

  // launch::join_any: the positions in `impls` of those that ended within `timeout`.
  static std::vector<std::size_t> wait_any(const std::vector<Impl*>& impls,
                                           std::chrono::milliseconds timeout);

 private:
  Impl(std::string name, StartMethod method, pid_t pid, detail::Fd result_fd,
       Clock::time_point started);

  // Drains every worker's result pipe and watches for their ends, all in one poll(), until one
  // or more has ended or `deadline` passes; their positions in `impls`.
  static std::vector<std::size_t> wait_any_until(const std::vector<Impl*>& impls,
                                                 const detail::Deadline& deadline);
  // wait_any_until for this worker alone; true once the end is seen.
  bool wait_for_end(const detail::Deadline& deadline);
  // Takes what its result pipe holds now and checks for its end, without blocking; true once
  // it ended (everything it wrote is then drained).
  bool ended_now();
  // The descriptor that becomes readable when it ends (pidfd, or the forkserver's status
  // socket); -1 where there is none (no pidfd: a kernel before 5.3, or macOS).
  int end_fd() const;
  void drain_result();
  bool check_ended();           // non-blocking
  bool check_child_ended();     // fork, spawn
  bool check_status_message();  // forkserver
  void mark_ended(int wait_status);
  void mark_lost(std::string why);
  void send_signal(int sig);
  const WorkerOutcome& finish();

  std::string name_;
  StartMethod method_;
  pid_t pid_;
  Clock::time_point started_;
  Clock::time_point ended_at_{};

  detail::Fd result_fd_;
  bool result_eof_ = false;
  std::string result_text_;

  detail::Fd pidfd_;      // fork, spawn: readable when the child exits (absent on old kernels)
  detail::Fd status_fd_;  // forkserver
  std::string status_bytes_;

  bool ended_ = false;
  int wait_status_ = 0;
  std::string lost_;  // why no wait status can be had, when that happens
  bool forced_ = false;
  std::optional<WorkerOutcome> outcome_;
};

}  // namespace fc::launch
