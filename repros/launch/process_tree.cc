// The OS-independent half of process_tree.h: walking a tree and comparing two looks at it.
#include "launch/process_tree.h"

#include <algorithm>
#include <set>

namespace fc::launch {

std::size_t TreeLook::thread_count() const {
  std::size_t n = 0;
  for (const auto& [pid, p] : processes) n += p.threads.size();
  return n;
}

TreeLook look_at_tree(const std::vector<ProcessId>& roots) {
  TreeLook look;
  look.at = std::chrono::steady_clock::now();
  std::vector<ProcessId> todo(roots.begin(), roots.end());
  std::set<ProcessId> seen;
  const auto table = all_children();  // one pass for the whole look, where that is cheaper
  auto children_of = [&](ProcessId pid) {
    if (!table) return child_processes(pid);
    std::vector<ProcessId> out;
    for (auto [it, end] = table->equal_range(pid); it != end; ++it) out.push_back(it->second);
    return out;
  };
  while (!todo.empty()) {
    const ProcessId pid = todo.back();
    todo.pop_back();
    if (pid <= 0 || !seen.insert(pid).second) continue;
    auto facts = process_facts(pid);
    if (!facts) continue;
    TreeLook::Process p;
    p.facts = *facts;
    if (!facts->zombie()) p.threads = thread_facts(pid);
    look.processes.emplace(pid, std::move(p));
    // A child found through a parent that ended since may have been reused by a stranger: its
    // parent must still be the process it was found under.
    for (ProcessId child : children_of(pid)) {
      auto cf = process_facts(child);
      if (cf && cf->ppid == pid) todo.push_back(child);
    }
  }
  return look;
}

TreeChange compare_looks(const TreeLook& before, const TreeLook& after) {
  TreeChange c;
  const auto interval_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::nanoseconds>(after.at - before.at).count()));
  for (const auto& [pid, p] : after.processes) {
    auto was = before.processes.find(pid);
    const bool same_process =
        was != before.processes.end() && was->second.facts.start_time == p.facts.start_time;
    if (!same_process || was->second.facts.zombie() != p.facts.zombie())
      c.membership_changed = true;
    for (const auto& [tid, t] : p.threads) {
      if (t.state == 'T' || t.state == 't') c.stopped = true;
      const TreeLook::Process* old = same_process ? &was->second : nullptr;
      auto prev = old ? old->threads.find(tid) : std::map<int, ThreadFacts>::const_iterator();
      if (!old || prev == old->threads.end()) {
        if (old) c.membership_changed = true;
        c.cpu_ns += t.cpu_ns;  // began since the last look: all its time is new
        continue;
      }
      if (t.cpu_ns > prev->second.cpu_ns) c.cpu_ns += t.cpu_ns - prev->second.cpu_ns;
      // Runnable at both looks and not run between: starved outright (its run-queue wait is only
      // counted once it runs). A poller caught runnable at one look is not.
      if (t.state == 'R' && prev->second.state == 'R' && t.cpu_ns == prev->second.cpu_ns)
        c.wanted_cpu = true;
      if (t.run_delay_known && prev->second.run_delay_known &&
          t.run_delay_ns > prev->second.run_delay_ns) {
        const std::uint64_t waited = t.run_delay_ns - prev->second.run_delay_ns;
        c.run_delay_ns += waited;
        if (waited * 4 >= interval_ns) c.wanted_cpu = true;
      }
    }
    if (same_process)
      for (const auto& [tid, t] : was->second.threads)
        if (!p.threads.count(tid)) c.membership_changed = true;
  }
  for (const auto& [pid, p] : before.processes)
    if (!after.processes.count(pid)) c.membership_changed = true;
  return c;
}

}  // namespace fc::launch
