// fork: the child is a copy of the parent (every lock and thread-pool state included) and calls
// the worker function on the payload object itself; nothing is serialized on the way in.
#include <unistd.h>

#include "launch/fdio_posix.h"
#include "launch/ptracer.h"
#include "launch/start_methods.h"
#include "launch/worker_child_posix.h"
#include "launch/worker_impl_posix.h"

namespace fc::launch::detail {

std::unique_ptr<Worker::Impl> start_fork(const std::string& name, WorkerFn fn,
                                         const nlohmann::json& payload, StartTime started) {
  auto [result_r, result_w] = make_pipe();
  // Launcher::start flushed stdio: the child's copies of the buffers are empty.
  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    allow_supervisor_ptrace();  // a new task: forkcheck's debugger may attach to it too
    result_r.reset();
    forkserver_forget_inherited();
    exit_child(run_worker(fn, payload, result_w.get()));
  }
  result_w.reset();
  return Worker::Impl::for_child(name, StartMethod::kFork, pid, std::move(result_r), started);
}

}  // namespace fc::launch::detail
