// bench::memory_kib on Windows: the working set (the nearest thing to a resident set size).
// Windows has no proportional set size, so there is no "pss_kib".
#include "core/bench.h"
#include "launch/win32.h"

// The process memory API's header needs <windows.h> first; win32.h is the one place that includes
// it.
#include <psapi.h>

namespace fc::bench {

nlohmann::json memory_kib() {
  PROCESS_MEMORY_COUNTERS counters{};
  counters.cb = sizeof counters;
  nlohmann::json m = nlohmann::json::object();
  if (::GetProcessMemoryInfo(::GetCurrentProcess(), &counters, sizeof counters))
    m["rss_kib"] = static_cast<long long>(counters.WorkingSetSize / 1024);
  return m;
}

}  // namespace fc::bench
