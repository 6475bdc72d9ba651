// bench::memory_kib on macOS: the resident size from Mach's task_info. macOS has no proportional
// set size, so there is no "pss_kib".
#include <mach/mach.h>

#include "core/bench.h"

namespace fc::bench {

nlohmann::json memory_kib() {
  mach_task_basic_info_data_t info{};
  mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
  nlohmann::json m = nlohmann::json::object();
  if (::task_info(::mach_task_self(), MACH_TASK_BASIC_INFO, reinterpret_cast<task_info_t>(&info),
                  &count) == KERN_SUCCESS)
    m["rss_kib"] = static_cast<long long>(info.resident_size / 1024);
  return m;
}

}  // namespace fc::bench
