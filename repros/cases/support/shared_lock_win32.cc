// The torch cases' cross-process lock on Windows: a lock word in the shared segment that holds the
// pid of the process that has it (0 when free). A Windows mutex cannot live in a mapping, and a
// named one would be one more name to hand to every worker. A waiter tries in short sleeps until
// its deadline and looks at the holder meanwhile: a holder that has exited is an error at once, as
// EOWNERDEAD is on Linux. (A holder's pid reused by a new process would only delay that error to
// the deadline.) See shared_memory.h.
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "cases/support/shared_memory.h"
#include "launch/win32.h"  // <windows.h>, lean: a unity batch may hold Winsock too

namespace fc::cases {
namespace {

// Whether process `pid` has exited (or never existed).
bool has_exited(std::uint32_t pid) {
  HANDLE h = ::OpenProcess(SYNCHRONIZE, FALSE, pid);
  if (h == nullptr) return ::GetLastError() == ERROR_INVALID_PARAMETER;  // no such process
  const bool exited = ::WaitForSingleObject(h, 0) == WAIT_OBJECT_0;
  ::CloseHandle(h);
  return exited;
}

}  // namespace

const char* process_mutex_kind() {
  return "a lock word in the segment holding its owner's pid (Windows)";
}

void init_process_shared_mutex(ProcessMutex* m) { m->owner.store(0); }

SharedLock::SharedLock(ProcessMutex* m, std::chrono::seconds timeout) : m_(m) {
  const std::uint32_t self = ::GetCurrentProcessId();
  const double t0 = monotonic_s();
  const double deadline = t0 + static_cast<double>(timeout.count());
  double next_look = t0;
  for (;;) {
    std::uint32_t holder = 0;
    if (m_->owner.compare_exchange_strong(holder, self, std::memory_order_acquire)) break;
    const double now = monotonic_s();
    if (now >= next_look) {
      // Only if the word still names it: a holder that released the lock and then exited is no
      // dead holder. Freeing it is what Linux's robust mutex does after EOWNERDEAD
      // (pthread_mutex_consistent, unlock): the next waiter takes the lock.
      const std::uint32_t dead = holder;
      if (has_exited(dead) && m_->owner.compare_exchange_strong(holder, 0)) {
        // The holder died mid-update: the protected state cannot be trusted, so this is an error.
        throw std::runtime_error("the cross-process lock's holder (pid " + std::to_string(dead) +
                                 ") exited while holding it");
      }
      next_look = now + 0.05;
    }
    if (now > deadline)
      throw std::runtime_error("the cross-process lock was not free within " +
                               std::to_string(timeout.count()) + " s (held by pid " +
                               std::to_string(holder) + ")");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  waited_s_ = monotonic_s() - t0;
}

SharedLock::~SharedLock() { m_->owner.store(0, std::memory_order_release); }

}  // namespace fc::cases
