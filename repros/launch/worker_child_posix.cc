#include "launch/worker_child_posix.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "launch/fdio_posix.h"
#include "launch/worker_result.h"

namespace fc::launch::detail {
namespace {

int write_result(const WorkerResult& r, int result_fd) {
  // If the parent is gone there is no one to tell; the exit code still says what happened.
  write_all(result_fd, r.document.data(), r.document.size());
  ::close(result_fd);
  return r.exit_code;
}

}  // namespace

int run_worker(WorkerFn fn, const nlohmann::json& payload, int result_fd) noexcept {
  return write_result(run_worker_function(fn, payload), result_fd);
}

int run_named_worker(const std::string& name, const std::string& payload_text,
                     int result_fd) noexcept {
  return write_result(run_worker_by_name(name, payload_text), result_fd);
}

void exit_child(int code) noexcept {
  try {
    std::cout.flush();
    std::cerr.flush();
  } catch (...) {
  }
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace fc::launch::detail
