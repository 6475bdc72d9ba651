// How many debuggers run at once to take stacks: at most `per_tree` for one tree (a tree of
// hundreds of processes must not start hundreds of debuggers: descriptors, memory; gdb takes
// hundreds of MiB on a libtorch process), for at most `trees` trees at once (Supervisor::run's
// job slots). A tree that waits for a slot spends its stacks budget waiting; what is not taken
// when the budget is spent is read from /proc (stack_taking.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <thread>

namespace fc::harness {

class DebuggerSlots {
 public:
  DebuggerSlots(size_t trees, size_t per_tree) : trees_(trees), per_tree_(per_tree) {}
  // A debugger per CPU for one tree, and never fewer than two.
  static size_t per_tree_default() {
    return std::max<size_t>(2, std::thread::hardware_concurrency());
  }

  // One debugger of `tree` runs (counted before asking, and after each start).
  void running(std::uint64_t tree) { ++running_[tree]; }
  // Whether one more may start for `tree` now.
  bool may_start(std::uint64_t tree) const {
    const auto it = running_.find(tree);
    if (it == running_.end()) return running_.size() < trees_ && per_tree_ > 0;
    return it->second < per_tree_;
  }

 private:
  size_t trees_, per_tree_;
  std::map<std::uint64_t, size_t> running_;  // trees with a debugger running: how many
};

}  // namespace fc::harness
