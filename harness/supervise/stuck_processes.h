// Processes that can never go on by themselves: the strongest evidence of a hang the kernel gives.
// A process is STUCK when every one of its threads sleeps, none has run since the previous look,
// and each waits where nothing can end the wait (launch::ThreadWait): a futex wait with no
// timeout on a word only the process itself can wake (flagged private, or on private anonymous
// memory), with no thread of it running to wake it; or pause()/sigsuspend() in a process that
// catches no signal. Nothing but a signal (a handler that releases the lock, which CPython's own
// does not do; for a pause, one that kills it) ends either. It is what a lock copied locked at
// fork looks like in the child (the fork copied the lock, not its owner), a libgomp barrier of a
// thread team that no longer exists, a function-local static whose initialiser was another
// thread of the parent, a worker that ignores SIGTERM and pauses for good.
// A process waiting on a pipe, a socket, a timed wait or a shared futex is not stuck: something
// outside it may still wake it (an idle pool worker waiting for work is not a stall).
// Processes sharing one address space (vfork, CLONE_VM) share private futexes too; a vfork parent
// sleeps in vfork, not in a futex, and such sharing is otherwise rare enough not to be looked for.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/process_tree.h"

namespace fc::harness {

struct StuckProcess {
  launch::ProcessId pid = 0, ppid = 0;
  std::string name;
  std::size_t threads = 0;
  std::chrono::steady_clock::time_point since;  // the look before the first that found it so
  std::vector<std::uint64_t> words;             // the futex word each thread waits on (0: a pause)
  bool pause = false;                           // every thread waits in a pause with no handler
};

class StuckProcesses {
 public:
  // Reads what a thread waits in (launch::thread_wait; tests give their own).
  using WaitReader = launch::ThreadWaitReader;
  explicit StuckProcesses(WaitReader read = launch::thread_wait) : read_(std::move(read)) {}

  // One more look at the tree (`before`: the previous one). A process's threads' waits are read
  // only where every thread slept (S) through the interval with no CPU: a look at a working tree
  // costs nothing more. `held`: a debugger of ours held processes of the tree meanwhile: what
  // was found stuck stays so, and at the next look a process found stuck before may have run a
  // little (the attach woke its threads into the debugger's stop) if each thread waits where it
  // did.
  void look(const launch::TreeLook& before, const launch::TreeLook& now, bool held = false);
  // Forget everything (a pause: Ctrl-Z).
  void clear() { stuck_.clear(); }

  const std::map<launch::ProcessId, StuckProcess>& stuck() const { return stuck_; }

 private:
  WaitReader read_;
  std::map<launch::ProcessId, StuckProcess> stuck_;
  bool after_hold_ = false;
};

}  // namespace fc::harness
