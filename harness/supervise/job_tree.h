// Every process of one supervised child's tree, as the POSIX supervisor finds and signals it.
// Found through child links from the child (launch/process_tree.h: also those that changed their
// process group or session), plus the orphans of the tree that the kernel re-parented to us (a
// child subreaper) and the supervisor handed over (adopt), plus, when it ends, every process
// started with the job's run token. Each process found is held by a ProcessHandle (a pidfd, or its
// pid and start time) from the moment it is seen: a signal goes through that handle, so it never
// reaches a process that got the pid later. The process group is signalled as a whole only while
// the child itself is not reaped, since until then its pid (the group's id) cannot be reused.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/platform/process_handle.h"
#include "launch/process_tree.h"

namespace fc::harness {

class JobTree {
 public:
  // `root`: our child, not yet reaped, leader of its own process group; `token`: its
  // FORKCHECK_RUN value, which its descendants inherit. `attached`: a running process forkcheck
  // did not start (forkcheck attach): not our child, its group not ours, no token; its processes
  // are not the guardian's to end should forkcheck die, and the tree is walked from it only
  // while it is still the process of that start time.
  JobTree(ProcessId root, std::uint64_t root_start_time, std::string token, bool attached = false);
  // The guardian forgets what the tree still held (ended by now).
  ~JobTree();
  JobTree(const JobTree&) = delete;
  JobTree& operator=(const JobTree&) = delete;

  ProcessId root() const { return root_; }
  std::uint64_t root_start_time() const { return root_start_time_; }
  const std::string& token() const { return token_; }
  // The child was reaped: from now on its group is not signalled as a whole, and the tree is
  // not walked from its pid. (The supervisor holds it unreaped until its leftovers are killed.)
  void root_reaped() { root_reaped_ = true; }

  // Whether an orphan re-parented to us is of this tree: seen in it before, or started with its
  // token.
  bool claims(const launch::ProcessFacts& orphan) const;
  // Whether this process (pid and start time) was ever seen in the tree.
  bool has_seen(ProcessId pid, std::uint64_t start_time) const {
    return seen_.count({pid, start_time}) > 0;
  }
  void adopt(const launch::ProcessFacts& orphan);

  // Looks at the tree now: the change since the previous look (the first: none); a handle for
  // every process not seen before (the guardian is told of it), and none kept for those that
  // ended (a tree that forks thousands of short-lived processes must not cost a descriptor each).
  launch::TreeChange look();
  const launch::TreeLook& last_look() const { return last_; }

  // Sends `sig` to every live process of the tree (the child too unless `spare_root`), through
  // their handles, and to the group as a whole while the child is unreaped and every member of
  // the group is of the tree (any process of the session may join it: one that did is not
  // signalled, and is named by group_strangers()); returns the pids reached.
  std::vector<ProcessId> signal_all(int sig, bool spare_root = false);
  // Sends `sig` to one process of the tree, through its handle; false when it is not held (not
  // seen in the tree, or gone).
  bool signal(ProcessId pid, int sig);
  // Processes found in the child's process group that are not of its tree.
  const std::set<ProcessId>& group_strangers() const { return strangers_; }

  // What is left of the tree besides the child: a fresh look, and every process started with the
  // job's token among our descendants (elsewhere than Linux: among all processes, since an orphan
  // goes to launchd there). Each gets a handle.
  std::vector<ProcessId> leftovers();

  // Waits up to `ms` for every process signalled so far to end; the pids still alive.
  std::vector<ProcessId> wait_ended(int ms) const;

 private:
  void hold(const launch::ProcessFacts& f);
  std::vector<ProcessId> alive_besides_root() const;
  void drop(std::map<ProcessId, ProcessHandle>::iterator it);
  // Whether every member of the child's group is of the tree (seen in it, or started with its
  // token); strangers are remembered.
  bool group_is_ours();
  bool of_tree(const launch::ProcessFacts& f) const;

  ProcessId root_;
  std::uint64_t root_start_time_;
  std::string token_;
  bool attached_ = false;
  bool root_reaped_ = false;
  std::vector<std::pair<ProcessId, std::uint64_t>> orphans_;  // adopted: pid, start time
  std::map<ProcessId, ProcessHandle> handles_;
  std::set<std::pair<ProcessId, std::uint64_t>> seen_;  // (pid, start time) of every member ever
  launch::TreeLook last_;
  bool looked_ = false;
  std::set<ProcessId> strangers_;
};

}  // namespace fc::harness
