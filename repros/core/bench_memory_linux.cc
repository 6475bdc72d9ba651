// bench::memory_kib on Linux: resident and proportional set sizes from /proc/self/smaps_rollup.
#include <fstream>
#include <sstream>
#include <string>

#include "core/bench.h"

namespace fc::bench {

nlohmann::json memory_kib() {
  std::ifstream in("/proc/self/smaps_rollup");
  nlohmann::json m = nlohmann::json::object();
  std::string key;
  long long value;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    if (!(s >> key >> value)) continue;
    if (key == "Rss:") m["rss_kib"] = value;
    if (key == "Pss:") m["pss_kib"] = value;
  }
  return m;
}

}  // namespace fc::bench
