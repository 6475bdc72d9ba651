#include "harness/supervise/look_facts.h"

#include <algorithm>
#include <utility>

namespace fc::harness {

void count_processes(const launch::TreeLook& before, const launch::TreeLook& after, LookFacts& f) {
  for (const auto& [pid, p] : after.processes) {
    if (p.facts.zombie()) continue;
    ++f.processes;
    f.pids.push_back(pid);
    const auto was = before.processes.find(pid);
    bool asleep = was != before.processes.end() && !p.threads.empty();
    for (auto it = p.threads.begin(); asleep && it != p.threads.end(); ++it) {
      const auto prev = was->second.threads.find(it->first);
      asleep = (it->second.state == 'S' || it->second.state == 'D') &&
               prev != was->second.threads.end() && prev->second.cpu_ns == it->second.cpu_ns;
    }
    if (asleep) f.asleep.insert(pid);
  }
}

void add_sleeper(std::vector<SleepingThread>& sleeping, SleepingThread t) {
  const auto ends = [](const SleepingThread& x) {
    return x.ends.value_or(std::chrono::steady_clock::time_point::max());
  };
  const auto at = std::upper_bound(
      sleeping.begin(), sleeping.end(), t,
      [&](const SleepingThread& x, const SleepingThread& y) { return ends(x) < ends(y); });
  sleeping.insert(at, std::move(t));
}

}  // namespace fc::harness
