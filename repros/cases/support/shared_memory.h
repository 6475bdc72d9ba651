// Cross-process state for the torch cases that share memory between workers (hogwild-shared-memory,
// selfplay-pipeline): a named shared memory segment (core/shared_segment.h) and a process-shared
// mutex inside one. A spawned worker cannot be handed a mapping or a lock (its payload is JSON),
// but it can open a segment by name, as Python's multiprocessing.shared_memory does. The lock is
// per OS: shared_lock_linux.cc (a robust mutex, a timed lock), shared_lock_mac.cc (macOS has
// neither: the lock is tried until its deadline, and a dead holder shows as that deadline),
// shared_lock_win32.cc (a lock word holding its owner's pid: a dead holder is seen at once).
#pragma once

#include <chrono>
#include <string>

#ifdef _WIN32
#include "cases/support/process_mutex_win32.h"
#else
#include "cases/support/process_mutex_posix.h"
#endif
#include "core/shared_segment.h"

namespace fc::cases {

// The named segment is the repro core's (shm_open; on Windows a named file mapping).
using SharedSegment = fc::SharedSegment;

// Whether the segment `name` can still be opened (evidence that it was cleaned up).
inline bool shm_exists(const std::string& name) { return fc::shared_segment_exists(name); }

// A mutex placed in a shared segment (ProcessMutex: process_mutex_posix.h, _win32.h), initialised
// once by the creator. Lock waits are bounded: a worker that died holding the lock turns into an
// error in the others (Linux and Windows: at once; macOS: at the deadline), never into a silent
// wait.
void init_process_shared_mutex(ProcessMutex* m);
// What the lock is, in words, for the reports.
const char* process_mutex_kind();

class SharedLock {
 public:
  SharedLock(ProcessMutex* m, std::chrono::seconds timeout);  // throws on timeout/dead owner
  ~SharedLock();
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;
  double waited_s() const { return waited_s_; }

 private:
  ProcessMutex* m_;
  double waited_s_ = 0;
};

// Removes `path` (a file, or an empty directory: register its files first) if this process is
// ended by SIGTERM or SIGINT: that is how the harness ends a hung variant's process group, and a
// case killed there runs no destructors. Only the registering process removes; a fork child that
// inherits the handler leaves the paths alone. At most 8 paths per process. Windows: nothing to
// register (shared_memory_win32.cc says why).
void remove_on_termination(const std::string& path);
// The same for a shared memory segment's name (shm_unlink).
void remove_segment_on_termination(const std::string& name);

// A monotonic clock in seconds that is one clock for every process on the machine (POSIX:
// CLOCK_MONOTONIC; Windows: the performance counter), so times taken in different workers can be
// compared.
double monotonic_s();

}  // namespace fc::cases
