#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "harness/platform/process_info.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/job_tree.h"

namespace fc::harness {

JobTree::JobTree(ProcessId root, std::uint64_t root_start_time, std::string token)
    : root_(root), root_start_time_(root_start_time), token_(std::move(token)) {
  seen_.emplace(root, root_start_time);
  // Our child, unreaped: its pid cannot be reused, so this handle is the child itself.
  if (auto h = ProcessHandle::open(root, root_start_time)) handles_.emplace(root, std::move(*h));
}

bool JobTree::claims(const launch::ProcessFacts& orphan) const {
  return seen_.count({orphan.pid, orphan.start_time}) ||
         started_with_env(orphan.pid, kRunTokenVar, token_);
}

void JobTree::adopt(ProcessId orphan) {
  if (std::find(orphans_.begin(), orphans_.end(), orphan) == orphans_.end())
    orphans_.push_back(orphan);
}

void JobTree::hold(const launch::ProcessFacts& f) {
  seen_.emplace(f.pid, f.start_time);
  auto it = handles_.find(f.pid);
  if (it != handles_.end() && it->second.start_time() == f.start_time) return;
  if (it != handles_.end()) handles_.erase(it);  // a process of ours that ended; another has its pid
  if (auto h = ProcessHandle::open(f.pid, f.start_time)) handles_.emplace(f.pid, std::move(*h));
}

launch::TreeChange JobTree::look() {
  std::vector<ProcessId> roots = {root_};
  roots.insert(roots.end(), orphans_.begin(), orphans_.end());
  launch::TreeLook now = launch::look_at_tree(roots);
  // An orphan that is gone is forgotten (its pid may come back as a stranger).
  orphans_.erase(std::remove_if(orphans_.begin(), orphans_.end(),
                                [&](ProcessId p) { return !now.processes.count(p); }),
                 orphans_.end());
  for (const auto& [pid, p] : now.processes) hold(p.facts);
  launch::TreeChange change;
  if (looked_) change = launch::compare_looks(last_, now);
  last_ = std::move(now);
  looked_ = true;
  return change;
}

std::vector<ProcessId> JobTree::signal_all(int sig, bool spare_root) {
  // The group first, while its id is surely ours: it reaches at once what forks meanwhile.
  if (!root_reaped_ && !spare_root) ::kill(-root_, sig);
  std::vector<ProcessId> reached;
  for (const auto& [pid, h] : handles_) {
    if (spare_root && pid == root_) continue;
    if (h.signal(sig)) reached.push_back(pid);
  }
  return reached;
}

std::vector<ProcessId> JobTree::leftovers() {
  look();
  for (ProcessId p : processes_with_env(kRunTokenVar, token_)) {
    auto f = launch::process_facts(p);
    if (!f || f->zombie()) continue;
    auto h = ProcessHandle::open(p, f->start_time);
    // The token read after the handle was opened: the handle names the process that has it.
    if (h && started_with_env(p, kRunTokenVar, token_) && !h->ended()) {
      seen_.emplace(p, f->start_time);
      handles_.erase(p);
      handles_.emplace(p, std::move(*h));
    }
  }
  std::vector<ProcessId> left;
  for (const auto& [pid, h] : handles_)
    if (pid != root_ && !h.ended()) left.push_back(pid);
  return left;
}

std::vector<ProcessId> JobTree::wait_ended(int ms) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    std::vector<ProcessId> alive;
    for (const auto& [pid, h] : handles_)
      if (!h.ended()) alive.push_back(pid);
    if (alive.empty() || std::chrono::steady_clock::now() >= until) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace fc::harness
