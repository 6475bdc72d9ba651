// Worker: the handle a Launcher returns, forwarding to this platform's Worker::Impl
// (worker_posix.cc, worker_win32.cc).
#include <stdexcept>

#include "launch/worker_impl.h"

namespace fc::launch {

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Worker::Worker(Worker&&) noexcept = default;
Worker& Worker::operator=(Worker&&) noexcept = default;  // the replaced worker is ended
Worker::~Worker() = default;

ProcessId Worker::pid() const { return impl_ ? impl_->pid() : -1; }

const std::string& Worker::name() const {
  static const std::string empty;
  return impl_ ? impl_->name() : empty;
}

StartMethod Worker::method() const {
  if (!impl_) throw std::logic_error("Worker: used after being moved from");
  return impl_->method();
}

std::optional<WorkerOutcome> Worker::join(std::chrono::milliseconds timeout) {
  if (!impl_) throw std::logic_error("Worker: used after being moved from");
  return impl_->join(timeout);
}

WorkerOutcome Worker::terminate(std::chrono::milliseconds grace) {
  if (!impl_) throw std::logic_error("Worker: used after being moved from");
  return impl_->terminate(grace);
}

}  // namespace fc::launch
