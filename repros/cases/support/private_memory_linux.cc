// private_memory on Linux: /proc/self/smaps_rollup (Linux 4.14 on), the sums of /proc/self/smaps
// over every mapping. See private_memory.h.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cases/support/private_memory.h"

namespace fc::cases::private_memory {

namespace {
const char* const kRollup = "/proc/self/smaps_rollup";
}

std::string unavailable_reason() {
  if (std::ifstream(kRollup)) return "";
  return std::string("needs ") + kRollup +
         " (Linux 4.14 on) to read each worker's Private_Dirty, and this kernel has none";
}

Reading read_self() {
  Reading r;
  std::ifstream in(kRollup);
  std::string line, key;
  long long kib = 0;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    if (!(s >> key >> kib)) continue;
    if (key == "Private_Dirty:") r.private_dirty_kib = kib;
    if (key == "Shared_Dirty:") r.shared_dirty_kib = kib;
    if (key == "Rss:") r.rss_kib = kib;
  }
  return r;
}

long page_bytes() { return ::sysconf(_SC_PAGESIZE); }

}  // namespace fc::cases::private_memory
