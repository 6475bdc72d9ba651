#include "reports/watchdog_text.h"

#include <cstdio>

#include "reports/text.h"

namespace fc::reports {

std::string stuck_process_text(int pid, const std::string& name, std::size_t threads,
                               double stuck_s, bool pause) {
  const bool one = threads == 1;
  const std::string who = "pid " + std::to_string(pid) + (name.empty() ? "" : " [" + name + "]") +
                          " can never go on by itself: " +
                          (one ? std::string("its one thread has")
                               : "all " + std::to_string(threads) + " of its threads have");
  if (pause)
    return who + " waited in pause() for " + format_seconds(stuck_s) +
           ", and it catches no signal (nothing but its death ends that wait)";
  return who + " waited on a futex private to it, with no timeout, for " + format_seconds(stuck_s) +
         " (nothing but a signal could wake " + (one ? "it" : "them") + ")";
}

std::string rest_of_tree_text(bool still, double cpu_share) {
  if (still) return "the rest of the tree was still too";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", cpu_share * 100);
  return std::string("the rest of the tree kept working (") + buf + " of a CPU)";
}

std::string starved_text(double starved_s, double load_average, unsigned cpus) {
  std::string s = "runnable but waiting for a CPU for " + format_seconds(starved_s) +
                  ": the machine is overloaded";
  if (load_average >= 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " (load average %.1f on %u CPU%s)", load_average, cpus,
                  cpus == 1 ? "" : "s");
    s += buf;
  }
  return s;
}

}  // namespace fc::reports
