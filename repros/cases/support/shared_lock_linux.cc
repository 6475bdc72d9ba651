// The torch cases' cross-process lock on Linux: a robust, process-shared mutex and a timed lock on
// CLOCK_MONOTONIC (glibc's pthread_mutex_clocklock). A holder that died is EOWNERDEAD at once.
// See shared_memory.h.
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <stdexcept>
#include <string>
#include <system_error>

#include "cases/support/shared_memory.h"

namespace fc::cases {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::system_error(err, std::generic_category(), what);
}

}  // namespace

const char* process_mutex_kind() { return "a robust process-shared pthread mutex"; }

void init_process_shared_mutex(ProcessMutex* m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  const int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  if (rc != 0) fail("pthread_mutex_init", rc);
}

SharedLock::SharedLock(ProcessMutex* m, std::chrono::seconds timeout) : m_(m) {
  const double t0 = monotonic_s();
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += static_cast<time_t>(timeout.count());
  const int rc = pthread_mutex_clocklock(m_, CLOCK_MONOTONIC, &until);
  if (rc == EOWNERDEAD) {
    // The holder died mid-update: the protected state cannot be trusted, so this is an error.
    pthread_mutex_consistent(m_);
    pthread_mutex_unlock(m_);
    throw std::runtime_error("the cross-process lock's holder died while holding it");
  }
  if (rc == ETIMEDOUT)
    throw std::runtime_error("the cross-process lock was not free within " +
                             std::to_string(timeout.count()) + " s");
  if (rc != 0) fail("pthread_mutex_clocklock", rc);
  waited_s_ = monotonic_s() - t0;
}

SharedLock::~SharedLock() { pthread_mutex_unlock(m_); }

}  // namespace fc::cases
