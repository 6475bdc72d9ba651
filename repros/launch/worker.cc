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

std::vector<std::size_t> join_any(const std::vector<Worker*>& workers,
                                  std::chrono::milliseconds timeout) {
  std::vector<Worker::Impl*> impls;
  impls.reserve(workers.size());
  for (Worker* w : workers) {
    if (!w || !w->impl_) throw std::logic_error("join_any: a worker is null or was moved from");
    impls.push_back(w->impl_.get());
  }
  if (impls.empty()) return {};
  return Worker::Impl::wait_any(impls, timeout);
}

}  // namespace fc::launch
