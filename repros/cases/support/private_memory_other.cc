// private_memory off Linux: no reading, every variant of cow-refcount-growth skipped, saying why.
// See private_memory.h.
#include "cases/support/private_memory.h"

namespace fc::cases::private_memory {

std::string unavailable_reason() {
#ifdef _WIN32
  return "needs Linux: the case reads each worker's private dirty memory from "
         "/proc/self/smaps_rollup, which Windows does not have; Windows has no fork either, so "
         "no worker inherits the parent's pages to copy";
#else
  return "needs Linux: the case reads each worker's private dirty memory from "
         "/proc/self/smaps_rollup, which this platform does not have, and this build has no "
         "other reading of it (on macOS task_info's phys_footprint could be one)";
#endif
}

Reading read_self() { return {}; }

long page_bytes() { return 0; }

}  // namespace fc::cases::private_memory
