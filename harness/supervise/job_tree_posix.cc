#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "harness/platform/process_info.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/job_tree.h"

namespace fc::harness {

JobTree::JobTree(ProcessId root, std::uint64_t root_start_time, std::string token, bool attached)
    : root_(root),
      root_start_time_(root_start_time),
      token_(std::move(token)),
      attached_(attached) {
  seen_.emplace(root, root_start_time);
  // Our child, unreaped: its pid cannot be reused, so this handle is the child itself.
  if (auto h = ProcessHandle::open(root, root_start_time)) handles_.emplace(root, std::move(*h));
}

JobTree::~JobTree() {
  if (attached_) return;  // the guardian was never told of them
  for (const auto& [pid, h] : handles_) guardian_forget(pid, h.start_time());
}

bool JobTree::claims(const launch::ProcessFacts& orphan) const {
  return seen_.count({orphan.pid, orphan.start_time}) ||
         (!attached_ && started_with_env(orphan.pid, kRunTokenVar, token_));
}

void JobTree::adopt(const launch::ProcessFacts& orphan) {
  for (const auto& o : orphans_)
    if (o.first == orphan.pid && o.second == orphan.start_time) return;
  orphans_.emplace_back(orphan.pid, orphan.start_time);
}

void JobTree::hold(const launch::ProcessFacts& f) {
  seen_.emplace(f.pid, f.start_time);
  auto it = handles_.find(f.pid);
  if (it != handles_.end() && it->second.start_time() == f.start_time) return;
  if (it != handles_.end()) drop(it);  // a process of ours that ended; another has its pid
  if (auto h = ProcessHandle::open(f.pid, f.start_time)) {
    handles_.emplace(f.pid, std::move(*h));
    if (f.pid != root_ && !attached_) guardian_track(f.pid, f.start_time, /*group_leader=*/false);
  }
}

void JobTree::drop(std::map<ProcessId, ProcessHandle>::iterator it) {
  if (!attached_) guardian_forget(it->first, it->second.start_time());
  handles_.erase(it);
}

launch::TreeChange JobTree::look() {
  // Walked only from processes that are still the ones we knew: the child while unreaped, each
  // adopted orphan while it has the start time it was adopted with (either may have been reaped
  // and its pid given to a stranger).
  std::vector<ProcessId> roots;
  // Not our child: its parent may have reaped it, and its pid gone to a stranger.
  if (!root_reaped_ && attached_) {
    const auto f = launch::process_facts(root_);
    if (!f || f->start_time != root_start_time_) root_reaped_ = true;
  }
  if (!root_reaped_) roots.push_back(root_);
  orphans_.erase(std::remove_if(orphans_.begin(), orphans_.end(),
                                [](const auto& o) {
                                  auto f = launch::process_facts(o.first);
                                  return !f || f->start_time != o.second;
                                }),
                 orphans_.end());
  for (const auto& o : orphans_) roots.push_back(o.first);
  // Not our tree's subreaper: a process of it whose parent ended went to another reaper. Each one
  // held and still alive is walked from too (its handle names it: its pid is not a stranger's).
  if (attached_)
    for (const auto& [pid, h] : handles_)
      if (!h.ended()) roots.push_back(pid);
  launch::TreeLook now = launch::look_at_tree(roots);
  for (const auto& [pid, p] : now.processes) hold(p.facts);
  for (auto it = handles_.begin(); it != handles_.end();) {
    auto next = std::next(it);
    if (it->first != root_ && !now.processes.count(it->first) && it->second.ended()) drop(it);
    it = next;
  }
  launch::TreeChange change;
  if (looked_) change = launch::compare_looks(last_, now);
  last_ = std::move(now);
  looked_ = true;
  return change;
}

// Of the tree: seen in it, started with its token, or descended from a process seen in it (a
// short-lived descendant that dropped the token between two looks).
bool JobTree::of_tree(const launch::ProcessFacts& f) const {
  if (seen_.count({f.pid, f.start_time}) || started_with_env(f.pid, kRunTokenVar, token_))
    return true;
  launch::ProcessId up = f.ppid;
  for (int depth = 0; depth < 64 && up > 1; ++depth) {
    auto a = launch::process_facts(up);
    if (!a) return false;
    if (seen_.count({a->pid, a->start_time})) return true;
    up = a->ppid;
  }
  return false;
}

bool JobTree::group_is_ours() {
  bool ours = true;
  for (ProcessId p : group_members(root_)) {
    auto f = launch::process_facts(p);
    if (!f || of_tree(*f)) continue;
    strangers_.insert(p);
    ours = false;
  }
  return ours;
}

std::vector<ProcessId> JobTree::signal_all(int sig, bool spare_root) {
  // The group first, while its id is surely ours (the child unreaped) and all in it are the
  // tree's: it reaches at once what forks meanwhile.
  if (!root_reaped_ && !attached_ && !spare_root && group_is_ours()) ::kill(-root_, sig);
  std::vector<ProcessId> reached;
  for (const auto& [pid, h] : handles_) {
    if (spare_root && pid == root_) continue;
    if (h.signal(sig)) reached.push_back(pid);
  }
  return reached;
}

bool JobTree::signal(ProcessId pid, int sig) {
  auto it = handles_.find(pid);
  return it != handles_.end() && it->second.signal(sig);
}

std::vector<ProcessId> JobTree::leftovers() {
  look();
  if (attached_) return alive_besides_root();
  for (ProcessId p : descendants_with_env(::getpid(), kRunTokenVar, token_)) {
    auto f = launch::process_facts(p);
    if (!f || f->zombie()) continue;
    auto h = ProcessHandle::open(p, f->start_time);
    // The token read after the handle was opened: the handle names the process that has it.
    if (h && started_with_env(p, kRunTokenVar, token_) && !h->ended()) {
      seen_.emplace(p, f->start_time);
      if (auto old = handles_.find(p); old != handles_.end()) drop(old);
      handles_.emplace(p, std::move(*h));
      guardian_track(p, f->start_time, /*group_leader=*/false);
    }
  }
  return alive_besides_root();
}

std::vector<ProcessId> JobTree::alive_besides_root() const {
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
