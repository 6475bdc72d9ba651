#include "harness/supervise/stuck_processes.h"

#include <utility>

namespace fc::harness {

void StuckProcesses::look(const launch::TreeLook& before, const launch::TreeLook& now, bool held) {
  if (held) {
    after_hold_ = true;
    return;
  }
  const bool after_hold = std::exchange(after_hold_, false);
  std::map<launch::ProcessId, StuckProcess> found;
  for (const auto& [pid, p] : now.processes) {
    auto was = before.processes.find(pid);
    if (p.facts.zombie() || p.threads.empty() || was == before.processes.end() ||
        was->second.facts.start_time != p.facts.start_time)
      continue;
    // Every thread asleep now and at the previous look, not one nanosecond of CPU between (just
    // after our debugger let go: asleep now, in the same waits as before it came).
    const auto old = stuck_.find(pid);
    const bool lenient = after_hold && old != stuck_.end();
    bool still = p.threads.size() == was->second.threads.size();
    for (auto it = p.threads.begin(); still && it != p.threads.end(); ++it) {
      auto prev = was->second.threads.find(it->first);
      still = prev != was->second.threads.end() && it->second.state == 'S' &&
              (lenient || (prev->second.state == 'S' && it->second.cpu_ns == prev->second.cpu_ns));
    }
    if (!still) continue;
    StuckProcess s;
    s.pid = pid;
    s.ppid = p.facts.ppid;
    s.name = p.facts.name;
    s.threads = p.threads.size();
    s.since = before.at;  // it has not run since: it waited there then already
    s.pause = true;
    for (const auto& [tid, t] : p.threads) {
      const auto wait = read_(pid, tid);
      if (!wait || (!wait->untimed_private_futex && !wait->pause_without_handler)) {
        s.words.clear();
        break;
      }
      s.words.push_back(wait->untimed_private_futex ? wait->futex_word : 0);
      s.pause = s.pause && wait->pause_without_handler;
    }
    if (s.words.size() != p.threads.size()) continue;
    // Stuck since the first look that found it so, as long as each thread waits where it did.
    if (old != stuck_.end() && old->second.words == s.words)
      s.since = old->second.since;
    else if (lenient)
      continue;
    found.emplace(pid, std::move(s));
  }
  stuck_ = std::move(found);
}

}  // namespace fc::harness
