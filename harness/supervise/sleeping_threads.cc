#include "harness/supervise/sleeping_threads.h"

#include <algorithm>

#include "launch/tree_activity.h"

namespace fc::harness {

using launch::TreeActivity;

void SleepingThreads::look(const launch::TreeLook& before, const launch::TreeLook& now, bool held) {
  if (held) return;
  const double window = std::chrono::duration<double>(TreeActivity::kStallWindow).count();
  std::map<std::pair<launch::ProcessId, int>, Tracked> found;
  for (const auto& [pid, p] : now.processes) {
    const auto was = before.processes.find(pid);
    if (p.facts.zombie() || was == before.processes.end() ||
        was->second.facts.start_time != p.facts.start_time)
      continue;
    for (const auto& [tid, t] : p.threads) {
      const auto prev = was->second.threads.find(tid);
      if (t.state != 'S' || prev == was->second.threads.end() || prev->second.cpu_ns != t.cpu_ns)
        continue;
      const auto key = std::make_pair(pid, tid);
      // Found at the last look too, and it has not run since: the same wait, not read again.
      if (const auto old = threads_.find(key); old != threads_.end()) {
        found.emplace(key, old->second);
        continue;
      }
      const auto wait = read_(pid, tid);
      if (!wait || !wait->timed) continue;
      Tracked n;
      n.thread.pid = pid;
      n.thread.tid = tid;
      n.thread.process = p.facts.name;
      n.thread.syscall = wait->syscall;
      n.thread.since = before.at;
      if (wait->ends_in_s >= 0) {
        n.thread.ends = now.at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(wait->ends_in_s));
        n.thread.ends_exact = wait->ends_in_exact;
      }
      // Known to last a window at least (an exact timeout: what is left of it), or, unknown,
      // asleep in it through a whole look interval already (no CPU since `before`).
      n.counts = wait->ends_in_s < 0 || wait->ends_in_s >= window;
      found.emplace(key, std::move(n));
    }
  }
  threads_ = std::move(found);
}

std::vector<SleepingThread> SleepingThreads::sleeping() const {
  std::vector<SleepingThread> out;
  for (const auto& [key, t] : threads_)
    if (t.counts) out.push_back(t.thread);
  std::sort(out.begin(), out.end(), [](const SleepingThread& a, const SleepingThread& b) {
    if (a.ends.has_value() != b.ends.has_value()) return a.ends.has_value();
    return a.ends && *a.ends != *b.ends ? *a.ends < *b.ends : a.tid < b.tid;
  });
  return out;
}

}  // namespace fc::harness
