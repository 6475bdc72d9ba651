// fork and forkserver on Windows: there is no fork(), so neither start method exists. Launcher
// says so with std::logic_error, and the case catalog marks every fork and forkserver variant
// as skipped on Windows before anything runs (core/case_registry.cc).
#include <stdexcept>

#include "launch/start_methods.h"
#include "launch/worker_impl_win32.h"

namespace fc::launch {

namespace detail {

std::unique_ptr<Worker::Impl> start_fork(const std::string&, WorkerFn, const nlohmann::json&,
                                         StartTime) {
  throw std::logic_error("fork is not available on Windows");
}

std::unique_ptr<Worker::Impl> start_forkserver_worker(const std::string&, const std::string&,
                                                      StartTime) {
  throw std::logic_error("forkserver is not available on Windows: it forks each worker");
}

void forkserver_forget_inherited() noexcept {}

}  // namespace detail

void start_forkserver() {
  throw std::logic_error("forkserver is not available on Windows: it forks each worker");
}

}  // namespace fc::launch
