// The CPU time this test process has used: what the supervisor's own loop costs is measured with
// it (a loop that spins shows, however idle the children are).
#pragma once

#include <sys/resource.h>

namespace fc {

inline double own_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace fc
