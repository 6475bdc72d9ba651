// The torch cases' cross-process lock on macOS, which has process-shared mutexes but neither
// robust ones nor a timed lock (no pthread_mutex_timedlock, no clocklock): the lock is tried until
// its deadline, in short sleeps, and a holder that died shows as that deadline passing. See
// shared_memory.h.
#include <errno.h>
#include <pthread.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "cases/support/shared_memory.h"

namespace fc::cases {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::system_error(err, std::generic_category(), what);
}

}  // namespace

const char* process_mutex_kind() {
  return "a process-shared pthread mutex (macOS has no robust ones)";
}

void init_process_shared_mutex(ProcessMutex* m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  const int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  if (rc != 0) fail("pthread_mutex_init", rc);
}

SharedLock::SharedLock(ProcessMutex* m, std::chrono::seconds timeout) : m_(m) {
  const double t0 = monotonic_s();
  const double deadline = t0 + static_cast<double>(timeout.count());
  for (;;) {
    const int rc = pthread_mutex_trylock(m_);
    if (rc == 0) break;
    if (rc != EBUSY) fail("pthread_mutex_trylock", rc);
    if (monotonic_s() > deadline)
      throw std::runtime_error("the cross-process lock was not free within " +
                               std::to_string(timeout.count()) +
                               " s (macOS has no robust mutexes: its holder may have died)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  waited_s_ = monotonic_s() - t0;
}

SharedLock::~SharedLock() { pthread_mutex_unlock(m_); }

}  // namespace fc::cases
