// Threads asleep in a wait that ends by itself (launch::ThreadWait::timed): time.sleep, a wait
// with a timeout. A still tree with one of them is SLEEPING, not blocked: a wait that will end by
// itself is not a hang (watchdog.h).
// A thread counts while it stays in one timed wait (no CPU between looks) that is at least a
// stall window long, known so from its timeout; one whose timeout cannot be read counts from the
// start (it was found asleep through a whole look interval already). A poller that wakes every 100
// ms (Python 3.7's Pool worker handler, a loop around sleep(0.1)) never counts: a tree still but
// for it is still.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/process_tree.h"

namespace fc::harness {

struct SleepingThread {
  launch::ProcessId pid = 0;
  int tid = 0;
  std::string process;                          // the process's command name
  long syscall = -1;                            // what it sleeps in
  std::chrono::steady_clock::time_point since;  // the look before the first that found it so
  // When the wait ends: exactly, or at the latest (`ends_exact` false: a relative timeout, read
  // when it was first seen); nullopt where the timeout could not be read.
  std::optional<std::chrono::steady_clock::time_point> ends;
  bool ends_exact = false;
  // Not a timed system call: the process's own alarm, pending, ends its wait (the Python
  // bootstrap told where it was set: {file, line, function}).
  bool alarm = false;
  nlohmann::json alarm_where;
};

class SleepingThreads {
 public:
  using WaitReader = launch::ThreadWaitReader;
  explicit SleepingThreads(WaitReader read = launch::thread_wait) : read_(std::move(read)) {}

  // One more look (`before`: the previous one). Only threads asleep with no CPU since `before`
  // are read. `held`: a debugger of ours held processes of the tree meanwhile (a sleep it
  // interrupted resumes as restart_syscall): what counted before is kept.
  void look(const launch::TreeLook& before, const launch::TreeLook& now, bool held = false);
  void clear() { threads_.clear(); }

  // The threads that count, by the time their sleep ends (unknown ends last).
  std::vector<SleepingThread> sleeping() const;

 private:
  struct Tracked {
    SleepingThread thread;
    bool counts = false;
  };
  WaitReader read_;
  std::map<std::pair<launch::ProcessId, int>, Tracked> threads_;
};

}  // namespace fc::harness
