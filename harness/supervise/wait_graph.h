// Who waits on whom in a tree that has stopped: each blocked thread's wait with its object (a
// pipe or socket by inode, a child by pid, a futex private to its process or shared), who holds
// the other end of each pipe and socket, and the chain that follows from the program's own
// process to the root of the wait: a cycle (the processes wait for each other: nothing in the
// tree can ever go on), a process that is still working or asleep, or one outside the tree.
//
// The kernel's facts only: /proc/PID/task/TID/syscall (the call and its arguments),
// /proc/PID/fd and fdinfo (which pipe, which end), sock_diag (a Unix socket's peer). Read on Linux
// when time is called (wait_graph_linux.cc); elsewhere the graph says it was not read.
// Words are the reports' (reports/wait_chain_text.h): this file records and follows.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

// What one thread waits on.
struct ThreadWaitFact {
  enum class On {
    kRunning,      // not in a wait: running, runnable, or in uninterruptible I/O
    kTimed,        // a wait that ends by itself (ends_in_s when known)
    kOwnProcess,   // a futex private to its process, or pause(): only its own threads (or a signal)
    kSharedFutex,  // a futex in memory only processes of the tree can share (anonymous shared
                   // memory, an unlinked file: multiprocessing's locks, semaphores, events)
    kChild,        // waitpid/wait4/waitid for one child (`child`)
    kAnyChild,     // for any child (or a group of them)
    kFiles,        // to read or write pipes or sockets (`files`): read/write, or poll on them
    kHeld,         // stopped (by a debugger or a signal): what it waits in is not known
    kOther,        // a call whose object is not read here (select, accept, flock, a futex in a
                   // file other processes may map...)
  };
  struct File {
    int fd = -1;
    std::string kind;  // "pipe", "socket", or "other"
    std::uint64_t inode = 0;
    bool to_write = false;  // waits until it may write (the other side reads), else to read
  };
  int pid = 0, tid = 0;
  std::string thread;  // its name (comm)
  std::string call;    // the system call ("write", "wait4", "futex"); "" when running
  On on = On::kOther;
  int child = 0;
  std::vector<File> files;
  std::uint64_t bytes = 0;  // what a write() or send asked to write, where the call says
  double ends_in_s = -1;    // kTimed: when it ends, where known
};

// A process that has a pipe or socket open, and how.
struct FileHolder {
  int pid = 0;
  int fd = -1;
  bool reads = false, writes = false;
};

struct WaitGraphFacts {
  bool read = false;
  std::string why_not;  // when not read: why ("read on Linux only")
  int root = 0;         // the program's own process
  struct Process {
    int ppid = 0;
    std::string name;
    bool in_tree = true;
    // It catches SIGALRM, SIGVTALRM or SIGPROF: a timer it armed may still run its handler.
    bool timer_handler = false;
  };
  std::map<int, Process> processes;  // the tree's, and any outside it that holds a file of a wait
  std::vector<ThreadWaitFact> threads;
  std::map<std::uint64_t, std::vector<FileHolder>> holders;  // by inode
  std::map<std::uint64_t, std::uint64_t> peers;              // a Unix socket's inode -> its peer's
};

// Reads the graph of the tree `pids` (the program's process `root` among them) now. Linux; a
// graph with `why_not` elsewhere. An other end no process of the tree holds is looked for in the
// tree's ancestors, then in every other process within `scan_budget` (time is being called):
// what it does not reach stays unseen. `started`: each pid's start time as the last look saw it
// (ProcessFacts::start_time); a pid that now names a later process (it ended, and the pid was
// reused) is left out.
constexpr std::chrono::milliseconds kHolderScanBudget{200};
WaitGraphFacts read_wait_graph(int root, const std::vector<int>& pids,
                               std::chrono::milliseconds scan_budget = kHolderScanBudget,
                               const std::map<int, std::uint64_t>& started = {});

// Whether signal `sig` sent to `pid` now would reach its main thread and run a handler or end it:
// not ignored, not blocked there (Linux: /proc's SigIgn and the main thread's SigBlk). Where that
// cannot be read (other systems), false: nothing is assumed to wake it.
bool signal_reaches_main_thread(int pid, int sig);

// One step of the chain: a thread of `pid` waits (`wait`), on these processes (`on`).
struct WaitLink {
  ThreadWaitFact wait;
  std::vector<int> on;  // the processes that can end the wait (hold the other end, the child)
};

struct WaitChain {
  enum class End {
    kNone,     // nothing to follow (the program's process is not waiting on another)
    kCycle,    // back to a process already in the chain
    kWorking,  // a process that is running
    kAsleep,   // a process in a wait that ends by itself
    kOutside,  // a process outside the tree holds the other end
    kSelf,     // the other end is held only by the waiting process
    kUnknown,  // a wait whose other side is not known
  };
  std::vector<WaitLink> links;
  End end = End::kNone;
  int end_pid = 0;
  // Every process the chain's waits can reach is blocked and waits only on processes among them,
  // on objects whose other side is known: none of them can ever go on (a deadlock across
  // processes), short of a signal from outside.
  bool proven = false;
  std::vector<int> closed;  // those processes, when proven
  std::string unproven;     // else what stood in the way ("pid 7 is asleep")
};

WaitChain follow_waits(const WaitGraphFacts& g);

// report.json's `wait_chain` (reports/report.schema.json).
nlohmann::json to_json(const WaitChain& c, const WaitGraphFacts& g);

}  // namespace fc::harness
