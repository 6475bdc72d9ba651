// Worker::Impl on POSIX: waiting for a worker, reading its result, classifying its end.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "launch/forkserver_protocol_posix.h"
#include "launch/worker_impl_posix.h"

namespace fc::launch {

using detail::Deadline;
using detail::Fd;
using nlohmann::json;

namespace {

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Worker::Impl

Worker::Impl::Impl(std::string name, StartMethod method, pid_t pid, Fd result_fd,
                   Clock::time_point started)
    : name_(std::move(name)),
      method_(method),
      pid_(pid),
      started_(started),
      result_fd_(std::move(result_fd)) {
  detail::set_nonblocking(result_fd_.get());
}

std::unique_ptr<Worker::Impl> Worker::Impl::for_child(std::string name, StartMethod method,
                                                      pid_t pid, Fd result_fd,
                                                      Clock::time_point started) {
  std::unique_ptr<Impl> impl(new Impl(std::move(name), method, pid, std::move(result_fd), started));
  impl->pidfd_ = detail::open_pidfd(pid);
  return impl;
}

std::unique_ptr<Worker::Impl> Worker::Impl::for_forkserver(std::string name, pid_t pid,
                                                           Fd result_fd, Fd status_fd,
                                                           Clock::time_point started) {
  std::unique_ptr<Impl> impl(
      new Impl(std::move(name), StartMethod::kForkserver, pid, std::move(result_fd), started));
  detail::set_nonblocking(status_fd.get());
  impl->status_fd_ = std::move(status_fd);
  return impl;
}

Worker::Impl::~Impl() {
  if (ended_) return;
  try {
    if (wait_for_end(Deadline(std::chrono::milliseconds(0)))) return;
    send_signal(SIGKILL);
    wait_for_end(Deadline::forever());
  } catch (...) {
    // A destructor cannot report; the worker was at least sent SIGKILL.
  }
}

std::optional<WorkerOutcome> Worker::Impl::join(std::chrono::milliseconds timeout) {
  if (outcome_) return outcome_;
  if (!wait_for_end(Deadline(timeout))) return std::nullopt;
  return finish();
}

WorkerOutcome Worker::Impl::terminate(std::chrono::milliseconds grace) {
  if (outcome_) return *outcome_;
  if (wait_for_end(Deadline(std::chrono::milliseconds(0)))) return finish();
  send_signal(SIGTERM);
  if (wait_for_end(Deadline(grace))) return finish();
  forced_ = true;
  send_signal(SIGKILL);
  wait_for_end(Deadline::forever());
  return finish();
}

void Worker::Impl::send_signal(int sig) {
  // fork/spawn: the pid is our unreaped child, so it cannot have been reused. forkserver: the
  // server reaps it; check_ended() just before keeps the window for reuse tiny.
  if (ended_ || pid_ <= 0) return;
  if (::kill(pid_, sig) != 0 && errno != ESRCH) detail::throw_errno("kill");
}

std::vector<std::size_t> Worker::Impl::wait_any(const std::vector<Impl*>& impls,
                                                std::chrono::milliseconds timeout) {
  return wait_any_until(impls, Deadline(timeout));
}

bool Worker::Impl::wait_for_end(const Deadline& deadline) {
  return !wait_any_until({this}, deadline).empty();
}

std::vector<std::size_t> Worker::Impl::wait_any_until(const std::vector<Impl*>& impls,
                                                      const Deadline& deadline) {
  // Only where a worker has no pidfd (kernel < 5.3, macOS) is its end found by asking waitpid
  // again, in slices growing to 50 ms; otherwise poll() sleeps until something happens.
  int backoff_ms = 1;
  std::vector<struct pollfd> fds;
  for (;;) {
    std::vector<std::size_t> ended;
    bool unwatchable_end = false;
    fds.clear();
    for (std::size_t i = 0; i < impls.size(); ++i) {
      Impl& w = *impls[i];
      if (w.ended_now()) {
        ended.push_back(i);
        continue;
      }
      if (!w.result_eof_) fds.push_back({w.result_fd_.get(), POLLIN, 0});
      if (const int fd = w.end_fd(); fd >= 0)
        fds.push_back({fd, POLLIN, 0});
      else
        unwatchable_end = true;
    }
    if (!ended.empty() || deadline.expired()) return ended;

    int timeout_ms = deadline.poll_timeout_ms();
    if (unwatchable_end) {
      if (timeout_ms < 0 || timeout_ms > backoff_ms) timeout_ms = backoff_ms;
      backoff_ms = std::min(backoff_ms * 2, 50);
    }
    // Whatever woke it (data, EOF, an end) is taken at the top of the next round.
    if (::poll(fds.data(), static_cast<nfds_t>(fds.size()), timeout_ms) < 0 && errno != EINTR)
      detail::throw_errno("poll");
  }
}

bool Worker::Impl::ended_now() {
  if (!result_eof_) drain_result();
  if (!check_ended()) return false;
  // Everything the worker wrote is in the pipe by now; don't wait for EOF, which another
  // process that inherited the write end could hold back.
  if (!result_eof_) drain_result();
  return true;
}

int Worker::Impl::end_fd() const {
  return method_ == StartMethod::kForkserver ? status_fd_.get() : pidfd_.get();
}

void Worker::Impl::drain_result() {
  // A read error is treated like EOF: no more result will come from this pipe.
  if (detail::drain_available(result_fd_.get(), result_text_) != detail::DrainResult::kWouldBlock) {
    result_eof_ = true;
    result_fd_.reset();
  }
}

bool Worker::Impl::check_ended() {
  if (ended_) return true;
  return method_ == StartMethod::kForkserver ? check_status_message() : check_child_ended();
}

bool Worker::Impl::check_child_ended() {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    mark_ended(status);
  } else if (r < 0) {
    // ECHILD: someone else reaped it (a waitpid(-1) elsewhere, or SIGCHLD set to SIG_IGN).
    mark_lost(std::string("the worker's exit status was lost: waitpid: ") + std::strerror(errno));
  }
  return ended_;
}

bool Worker::Impl::check_status_message() {
  const auto drained = detail::drain_available(status_fd_.get(), status_bytes_);
  while (status_bytes_.size() >= sizeof(detail::StatusMessage)) {
    detail::StatusMessage m;
    std::memcpy(&m, status_bytes_.data(), sizeof m);
    status_bytes_.erase(0, sizeof m);
    if (m.tag == detail::kWaitStatus) {
      mark_ended(m.value);
      return true;
    }
  }
  if (drained != detail::DrainResult::kWouldBlock) {
    mark_lost("the forkserver went away before reporting how the worker ended");
  }
  return ended_;
}

void Worker::Impl::mark_ended(int wait_status) {
  ended_ = true;
  wait_status_ = wait_status;
  ended_at_ = Clock::now();
  status_fd_.reset();
  pidfd_.reset();
}

void Worker::Impl::mark_lost(std::string why) {
  mark_ended(0);
  lost_ = std::move(why);
}

const WorkerOutcome& Worker::Impl::finish() {
  WorkerOutcome o;
  o.forced = forced_;
  o.seconds = std::chrono::duration<double>(ended_at_ - started_).count();

  bool have_ok = false, have_error = false;
  json doc = json::parse(result_text_, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("ok")) {
    have_ok = true;
    o.result = std::move(doc["ok"]);
  } else if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    have_error = true;
    o.error = doc["error"].get<std::string>();
  }

  if (!lost_.empty()) {
    // No wait status: the result, when one came, is the best evidence left.
    o.status = have_ok ? WorkerOutcome::Status::kOk : WorkerOutcome::Status::kError;
    if (!have_error) o.error = have_ok ? "" : lost_;
  } else if (WIFSIGNALED(wait_status_)) {
    o.status = WorkerOutcome::Status::kCrash;
    o.signal = WTERMSIG(wait_status_);
    o.core_dumped = WCOREDUMP(wait_status_);
    o.error = signal_text(o.signal);
  } else {
    o.exit_code = WIFEXITED(wait_status_) ? WEXITSTATUS(wait_status_) : -1;
    const std::string code = std::to_string(o.exit_code);
    if (have_error) {
      o.status = WorkerOutcome::Status::kError;
    } else if (have_ok && o.exit_code == 0) {
      o.status = WorkerOutcome::Status::kOk;
    } else if (have_ok) {
      o.status = WorkerOutcome::Status::kError;
      o.error = "worker exited with status " + code + " after returning a result";
    } else {
      o.status = WorkerOutcome::Status::kError;
      o.error = "worker exited with status " + code + " without a result";
    }
  }
  outcome_ = std::move(o);
  result_text_.clear();
  result_text_.shrink_to_fit();
  return *outcome_;
}

}  // namespace fc::launch
