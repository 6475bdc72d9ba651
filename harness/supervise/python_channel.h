// The Python side's channel: a Unix stream socket that the bootstrap forkcheck puts into every
// Python process of a tree (harness/python/forkcheck_boot.py) connects to twice, once for events
// (JSON lines: hello, thread, fork, exception, child_exit, torch, start_method, exit, and stacks:
// every thread's stack, taken by the main thread on the stacks signal) and once for dumps (its
// hello passes a file, SCM_RIGHTS, that faulthandler writes into: one thread's own Python stack
// when forkcheck sends that thread the dump signal, and every thread's at a fatal signal; where
// the process could make no such file, faulthandler writes to the connection itself). The
// supervisor accepts and reads as its loop polls; this keeps what each process said, checked field
// by field (a line that is not what the protocol says is dropped, never believed), and the facts a
// report needs as JSON. POSIX only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/supervise/python_stacks_ask.h"

namespace fc::harness {

class PythonChannel {
 public:
  using Clock = std::chrono::steady_clock;

  // Listens at a fresh address for the tree run with `token` (Linux: an abstract name, nothing
  // on disk; elsewhere a socket file in the temporary folder, removed with the channel). nullptr
  // and `why` when it cannot.
  static std::unique_ptr<PythonChannel> open(const std::string& token, std::string& why);
  // forkcheck attach's: nothing listens; processes whose attachable bootstrap was found are
  // adopted (below).
  static std::unique_ptr<PythonChannel> for_attach();
  ~PythonChannel();
  PythonChannel(const PythonChannel&) = delete;
  PythonChannel& operator=(const PythonChannel&) = delete;

  // FORKCHECK_PY_CHANNEL's value; the signal a thread answers with its own stack on
  // (FORKCHECK_PY_SIGNAL, sent to one thread), and the one the main thread answers with every
  // thread's (FORKCHECK_PY_STACKS_SIGNAL).
  const std::string& address() const { return address_; }
  static int dump_signal();
  static int stacks_signal();

  // What the supervisor polls: the listening socket, then every open connection.
  int listen_fd() const { return listen_fd_; }
  std::vector<int> connection_fds() const;
  void accept_ready(Clock::time_point now);
  void read_ready(int fd, Clock::time_point now);

  // forkcheck attach: `pid` has the attachable bootstrap (python_attachable.h). Its dump file is
  // read as a dumps connection's (this takes `dump_file`, read from its end on), its listed
  // threads are its Python threads, and its main thread is the one whose id is the pid. It said
  // nothing: it is not in facts().
  void adopt(int pid, int dump_file, const std::vector<std::pair<int, std::string>>& threads,
             Clock::time_point now);
  // Every process adopted so far let go (its file closed): each look adopts afresh what it finds
  // then, so that one that exec'd, closed its files or ended is never asked on an old look's word.
  void forget_adopted();

  // Stacks on demand (python_stacks_ask.h). What `pid` offers: its main thread's OS id and its
  // Python threads' (as it told them), the stacks signal handled, the dump signal registered with
  // its dumps connection open.
  std::optional<PythonStacksAsk::Offer> offer(int pid) const;
  // Reads what `pid`'s connections and dump file hold now, without waiting; drain_all: every
  // process's (before facts(), so that a crash's dump written at the end is in).
  void drain(int pid, Clock::time_point now);
  void drain_all(Clock::time_point now);
  // Its dumps stream: how much so far, when the last bytes came, a part of it.
  std::size_t dump_size(int pid) const;
  Clock::time_point dump_last(int pid) const;
  std::string dump_slice(int pid, std::size_t from, std::size_t to) const;
  // Its "stacks" answers: how many so far, and the last one's threads as sent (ident,
  // native_id, name, frames outermost first).
  std::size_t stacks_answers(int pid) const;
  nlohmann::json last_stacks(int pid) const;

  // Everything the tree's Python processes said, for the run log (reports/ phrases it):
  // {"processes": [{pid, ppid, born, fork_seq, python, argv, paths, threads, forks, exceptions,
  //   child_exits, torch, start_methods, exit, crash}], "dropped": n, "quiet_folded": n}; null
  //   when none connected.
  nlohmann::json facts() const;
  // Thread ident -> OS thread id and name, for `pid`, from its thread events (the main thread's
  // from its hello).
  struct ThreadName {
    int native_id = 0;
    std::string name;
  };
  std::map<std::uint64_t, ThreadName> threads_of(int pid) const;
  // The alarms (signal.alarm, setitimer ITIMER_REAL) set and not yet due, of processes still
  // connected, whose SIGALRM was not ignored and that were not set from its own handler (a
  // heartbeat): each ends a wait by itself, where the signal can reach the process's main thread.
  // `at` is the latest it comes (the channel read the event a little after the call); `where`, the
  // frame that set it.
  struct PendingAlarm {
    int pid = 0;
    Clock::time_point set;  // when the channel heard of it
    Clock::time_point at;
    nlohmann::json where;
  };
  std::vector<PendingAlarm> pending_alarms(Clock::time_point now) const;
  bool any() const { return !processes_.empty(); }
  // How many processes told an exception whose message holds `piece`.
  std::size_t processes_that_raised(const std::string& piece) const;

 private:
  PythonChannel() = default;
  struct Connection {
    int fd = -1;
    int pid = 0;  // from the hello (checked against SO_PEERCRED where the OS tells)
    int peer_pid = 0;
    enum class Role { kUnknown, kEvents, kDumps } role = Role::kUnknown;
    std::string partial;
    Clock::time_point last_data;
    int passed_fd = -1;    // a descriptor that came with its first bytes (the dumps hello's file)
    bool refused = false;  // its process came past the bound on processes: not heard
  };
  struct Process;
  void line(Connection& c, const std::string& text, Clock::time_point now);
  void dump_bytes(Process& p, const char* data, size_t n, Clock::time_point now);
  void read_dump_file(Process& p, Clock::time_point now);
  void close_connection(Connection& c);
  Process& process(int pid, Clock::time_point now);
  // At the bound on processes, room for one more: the process that ended quietly first goes
  // into a count (quiet_folded_). Quiet: it ended, told no exception, crash, exit status but 0,
  // fork, child, signal, request or look, and was not forked beside other threads; no process
  // kept names it as its parent. False when none is.
  bool fold_a_quiet_process();
  bool quiet(const Process& p) const;
  std::vector<int> quiet_candidates_;  // found by the last scan, ended first first
  std::size_t quiet_folded_ = 0;
  // Hellos refused since a scan found nothing quiet: the next scan waits for 64 of them, so that a
  // tree of thousands that are not quiet costs a scan per 64 processes, not one each.
  std::size_t refused_since_empty_scan_ = 0;
  bool last_scan_empty_ = false;

  int listen_fd_ = -1;
  std::string address_, socket_file_;
  Clock::time_point opened_;
  std::map<int, Connection> connections_;  // by fd
  std::map<int, std::unique_ptr<Process>> processes_;
  std::size_t dropped_ = 0;  // lines not kept: not what the protocol says, or past a bound
  std::map<std::string, std::size_t> dropped_by_;  // why: "fork" (past its bound), ...
  void drop(const std::string& why) {
    ++dropped_;
    ++dropped_by_[why];
  }
};

}  // namespace fc::harness
