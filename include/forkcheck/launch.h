// Start methods with Python multiprocessing's semantics, for C++ programs.
//
//   fork        fork() and call the worker function in the child (memory is shared copy-on-write,
//               including every lock and thread-pool state the parent had: the hazard).
//   spawn       exec a fresh copy of this program that runs only the named worker; its input is a
//               JSON payload sent over a pipe, so main()'s set-up never runs in the worker.
//   forkserver  a server forked at start-up, while the process still has one thread, forks each
//               worker on request: spawn's clean state at close to fork's cost.
//
// A program that uses spawn or forkserver calls launch::init(argc, argv) first thing in main().
// Windows has no fork(): there, only spawn exists, and fork and forkserver throw std::logic_error.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::launch {

enum class StartMethod { kFork, kSpawn, kForkserver };

// A process id: pid_t on POSIX (an int on Linux and macOS), a Windows process id (a DWORD whose
// values stay far below 2^31). An int keeps this header free of <sys/types.h> and <windows.h>.
using ProcessId = int;

const char* to_string(StartMethod m);
std::optional<StartMethod> parse_start_method(std::string_view s);

// Why start method `m` does not exist on this platform; nullptr where it does. Windows has no
// fork(): fork and forkserver are missing there (process_win32.cc), POSIX has all three.
const char* unavailable_reason(StartMethod m);

// A worker takes its payload and returns its result; an exception it throws is the worker's error.
using WorkerFn = nlohmann::json (*)(const nlohmann::json& payload);

// Registers a worker by name; used through FORKCHECK_WORKER at namespace scope.
bool register_worker(const char* name, WorkerFn fn);
WorkerFn find_worker(const std::string& name);

#define FC_LAUNCH_CONCAT_(a, b) a##b
#define FC_LAUNCH_CONCAT(a, b) FC_LAUNCH_CONCAT_(a, b)
// FORKCHECK_WORKER(my_worker) { ... return nlohmann::json{...}; }  -- `payload` is the input.
#define FORKCHECK_WORKER(ident)                                                       \
  static nlohmann::json ident(const nlohmann::json& payload);                         \
  [[maybe_unused]] static const bool FC_LAUNCH_CONCAT(fc_worker_registered_, ident) = \
      ::fc::launch::register_worker(#ident, &ident);                                  \
  static nlohmann::json ident([[maybe_unused]] const nlohmann::json& payload)

// Thrown by start() when a payload cannot travel to a fresh process (e.g. it holds a live socket),
// the analogue of Python's "cannot pickle 'socket' object".
class NotSerializable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WorkerOutcome {
  enum class Status {
    kOk,     // the worker function returned; `result` holds its value
    kError,  // it threw (`error` holds the message) or exited non-zero without a result
    kCrash,  // killed by a signal it did not ask for
  };
  Status status = Status::kError;
  nlohmann::json result;  // kOk: what the worker returned
  std::string error;      // kError: the exception's what(), or why no result came back
  int exit_code = -1;     // when it exited
  int signal = 0;         // when a signal ended it
  bool core_dumped = false;
  bool forced = false;  // terminate() had to SIGKILL it after the grace period
  double seconds = 0;   // from start() to the end being observed
};

const char* to_string(WorkerOutcome::Status s);

class Worker {
 public:
  class Impl;
  explicit Worker(std::unique_ptr<Impl> impl);
  Worker(Worker&&) noexcept;
  Worker& operator=(Worker&&) noexcept;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  // A worker still running here is killed and reaped: no zombie, no orphan.
  ~Worker();

  ProcessId pid() const;
  const std::string& name() const;
  StartMethod method() const;

  // Waits for the worker to end, at most `timeout`; nullopt while it is still running.
  // Once it returned an outcome, later calls return the same outcome.
  std::optional<WorkerOutcome> join(std::chrono::milliseconds timeout);
  // SIGTERM, up to `grace` to end, then SIGKILL; always reaps. Returns the outcome observed.
  WorkerOutcome terminate(std::chrono::milliseconds grace);

 private:
  friend std::vector<std::size_t> join_any(const std::vector<Worker*>& workers,
                                           std::chrono::milliseconds timeout);
  std::unique_ptr<Impl> impl_;
};

// Waits until at least one of `workers` has ended, or `timeout` passes, in one wait over all of
// them (POSIX: one poll() over every worker's result pipe and pidfd or forkserver status
// socket; Windows: WaitForMultipleObjects on the process handles), draining every worker's
// result pipe meanwhile (a result may be larger than a pipe's buffer). Returns the positions in
// `workers` of those that have ended, in order; join() then returns each one's outcome at once.
// Empty when none ended within `timeout`, and at once when `workers` is empty. A worker that
// ended before the call counts at once: pass only those still waited for. Throws
// std::logic_error for a null or moved-from worker.
std::vector<std::size_t> join_any(const std::vector<Worker*>& workers,
                                  std::chrono::milliseconds timeout);

// The method a Launcher() gets, as Python's get_context() does: FORKCHECK_START_METHOD when it
// is set (`forkcheck exec --start-method`, `forkcheck matrix`), else this platform's default as
// Python 3.14 has it: forkserver on Linux, spawn on macOS and Windows. Throws
// std::invalid_argument when the variable names no method, or one this platform lacks.
StartMethod default_start_method();

// Python's multiprocessing.get_context(method), or get_context() with no method.
class Launcher {
 public:
  Launcher() : Launcher(default_start_method(), /*forced=*/false) {}
  // The program's own choice; FORKCHECK_FORCE_START_METHOD=1 with FORKCHECK_START_METHOD
  // overrides it (`forkcheck exec --force-start-method`), as forkcheck's Python bootstrap does.
  explicit Launcher(StartMethod method);
  StartMethod method() const { return method_; }
  // spawn only: exec `program` instead of this program (e.g. one that does not link libtorch,
  // for a worker that needs none). It must register the worker and call init().
  Launcher& spawn_program(std::string program) {
    program_ = std::move(program);
    return *this;
  }
  // Starts the registered worker `worker` with `payload`. Throws std::invalid_argument for an
  // unknown worker, NotSerializable when the payload cannot travel (spawn and forkserver send it
  // as JSON text; fork hands the object itself to the child, as Python's fork does),
  // std::logic_error for spawn when init() was never called, or for forkserver when the server
  // must be started now and the process has more than one thread, std::system_error on OS errors.
  Worker start(const std::string& worker, const nlohmann::json& payload) const;

 private:
  Launcher(StartMethod method, bool) : method_(method) {}
  StartMethod method_;
  std::string program_;
};

// First thing in main(): when this process was spawned as a worker, runs it and exits; otherwise
// returns. Safe to call in any program that links this library.
void init(int argc, char** argv);

// Starts the forkserver now. Throws std::logic_error when the process has more than one thread
// (a forkserver forked from a threaded process would inherit the very hazard it exists to avoid).
// Launcher(kForkserver).start() calls it when it was not called yet.
void start_forkserver();

// Number of threads in this process, from /proc/self/task (Linux), task_threads (macOS) or a
// Toolhelp snapshot (Windows); -1 when unknown.
int thread_count();

}  // namespace fc::launch
