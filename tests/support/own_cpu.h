// What the test process itself spends while it waits: CPU time, and how often the waiting thread
// went to sleep and woke (voluntary context switches). A loop that polls or spins shows in both;
// the wake count does not depend on how loaded the machine is, so it is what tests bound tightly.
#pragma once

#include <sys/resource.h>

namespace fc {

inline double own_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Times the calling thread blocked and was woken again; -1 where the platform cannot say
// (RUSAGE_THREAD is Linux's).
inline long own_thread_wakeups() {
#ifdef RUSAGE_THREAD
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw;
#else
  return -1;
#endif
}

}  // namespace fc
