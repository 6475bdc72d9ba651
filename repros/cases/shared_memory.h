// Cross-process state for the torch cases that share memory between workers (hogwild-shared-memory,
// selfplay-pipeline): a named POSIX shared memory segment and a process-shared mutex inside one.
// A spawned worker cannot be handed a mapping or a lock (its payload is JSON), but it can open a
// segment by name, as Python's multiprocessing.shared_memory does.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace fc::cases {

class SharedSegment {
 public:
  // A new zero-filled segment with a unique name (/forkcheck-PREFIX-PID-N). The creating process
  // removes the name in its destructor, on every path out of the case, unless done earlier.
  static SharedSegment create(const std::string& prefix, std::size_t bytes);
  // Maps an existing segment by name (in a worker).
  static SharedSegment open(const std::string& name, std::size_t bytes);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&&) = delete;
  SharedSegment(const SharedSegment&) = delete;
  ~SharedSegment();

  void* data() const { return data_; }
  const std::string& name() const { return name_; }
  // Creator only: remove the name now (mappings stay valid). Once every worker has mapped the
  // segment nothing needs the name, and nothing is left in /dev/shm if this process is killed.
  void unlink();
  bool unlinked() const { return unlinked_; }

 private:
  SharedSegment(std::string name, void* data, std::size_t size, pid_t creator);
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  pid_t creator_ = -1;  // the process that owns the name; -1 in the processes that opened it
  bool unlinked_ = false;
};

// Whether /dev/shm still lists the segment `name` (evidence that it was cleaned up).
bool shm_exists(const std::string& name);

// A PTHREAD_PROCESS_SHARED, robust mutex placed in a shared segment, initialised once by the
// creator. Lock waits are bounded: a worker that died holding the lock turns into an error in
// the others, never into a silent wait.
void init_process_shared_mutex(pthread_mutex_t* m);

class SharedLock {
 public:
  SharedLock(pthread_mutex_t* m, std::chrono::seconds timeout);  // throws on timeout/dead owner
  ~SharedLock();
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;
  double waited_s() const { return waited_s_; }

 private:
  pthread_mutex_t* m_;
  double waited_s_ = 0;
};

// Removes `path` (a file, or an empty directory: register its files first) if this process is
// ended by SIGTERM or SIGINT: that is how the harness ends a hung variant's process group, and a
// case killed there runs no destructors. Only the registering process removes; a fork child that
// inherits the handler leaves the paths alone. At most 8 paths per process.
void remove_on_termination(const std::string& path);

// CLOCK_MONOTONIC in seconds: one clock for every process on the machine, so times taken in
// different workers can be compared.
double monotonic_s();

}  // namespace fc::cases
