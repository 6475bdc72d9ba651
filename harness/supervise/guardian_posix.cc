#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/platform/process_handle.h"
#include "harness/platform/process_info.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/reaper.h"
#include "launch/fdio_posix.h"
#include "launch/process_tree.h"
#include "launch/start_state_posix.h"

namespace fc::harness {
namespace {

// One message from forkcheck to the guardian. A tracked child is opened by the guardian from its
// pid and start time (ProcessHandle): forkcheck sends kForget before it reaps the child, so when
// the guardian reads kTrack the pid is the child's, or gone, or (reaped and reused) fails the
// start time check.
struct Message {
  std::int32_t op;  // kTrackLeader, kTrackMember, kForget or kStop
  std::int32_t pid;
  std::uint64_t start_time;
};
constexpr std::int32_t kTrackLeader = 1, kForget = 2, kStop = 3, kTrackMember = 4;

struct Tracked {
  ProcessHandle handle;
  bool group_leader;
};

int g_sock = -1;            // forkcheck's end
ProcessId g_guardian = -1;  // its pid, while it runs
bool g_said_unguarded = false;

// forkcheck's helpers, by pid and start time: a dead helper's pid may come back as an orphan.
std::map<ProcessId, std::uint64_t>& helpers() {
  static std::map<ProcessId, std::uint64_t> h;
  return h;
}

// Kills what the run left: each tracked process (and a leader's group, while the leader is
// unreaped), and every process started with the run's token. Round after round, until a round
// finds nothing alive: one being killed may have forked a moment before.
void sweep(std::map<ProcessId, Tracked>& tracked) {
  for (int round = 0; round < 50; ++round) {
    bool found = false;
    for (auto& [pid, t] : tracked) {
      // Signal 0 through the handle: it still exists (alive, or a zombie nobody reaped), so the
      // group's id is still its pid, and no stranger's.
      if (t.group_leader && t.handle.signal(0)) ::kill(-pid, SIGKILL);
      if (!t.handle.ended()) found = t.handle.signal(SIGKILL) || found;
    }
    for (ProcessId p : processes_with_env(kRunTokenVar, run_token())) {
      if (p == ::getpid()) continue;
      auto f = launch::process_facts(p);
      if (!f) continue;
      auto h = ProcessHandle::open(p, f->start_time);
      if (h && started_with_env(p, kRunTokenVar, run_token()) && h->signal(SIGKILL)) found = true;
    }
    if (!found) return;
    ::usleep(2000);
  }
}

// Runs in the guardian. It learns that forkcheck is gone from its pidfd (Linux) or from EOF on the
// socket: not EOF alone, since a process forked from forkcheck without an exec would hold the
// socket open.
[[noreturn]] void guardian_main(int sock, pid_t forkcheck) {
  ::setsid();  // out of forkcheck's process group and terminal: a Ctrl-C does not reach us
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Nothing of forkcheck's but the socket: a pipe forkcheck writes to (`forkcheck all | head`)
  // must not stay open because the guardian holds a copy.
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; ++fd) ::dup2(null, fd);
  const int keep[] = {sock};
  launch::detail::close_from_3(keep, 1);
  const launch::detail::Fd parent = launch::detail::open_pidfd(forkcheck);
  std::map<ProcessId, Tracked> tracked;
  while (::getppid() == forkcheck) {  // else forkcheck died before we got here
    pollfd fds[2] = {{sock, POLLIN, 0}, {parent.get(), POLLIN, 0}};
    const int rc = ::poll(fds, parent ? 2 : 1, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || (fds[1].revents & POLLIN)) break;  // forkcheck has exited
    Message m{};
    std::vector<launch::detail::Fd> received;
    const ssize_t n = launch::detail::recv_with_fds(sock, &m, sizeof m, received);
    if (n != static_cast<ssize_t>(sizeof m) || m.op == kStop) break;
    if (m.op == kForget) {
      auto it = tracked.find(m.pid);
      if (it != tracked.end() &&
          (m.start_time == 0 || it->second.handle.start_time() == m.start_time))
        tracked.erase(it);
    } else if (m.op == kTrackLeader || m.op == kTrackMember) {
      auto h = ProcessHandle::open(m.pid, m.start_time);
      tracked.erase(m.pid);
      if (h) tracked.emplace(m.pid, Tracked{std::move(*h), m.op == kTrackLeader});
    }
  }
  sweep(tracked);
  ::_exit(0);
}

// Bytes of messages the guardian has not taken yet: forkcheck never blocks on it (a stopped
// guardian would otherwise stall every watchdog); it keeps them, in order, and sends them later.
std::string& backlog() {
  static std::string bytes;
  return bytes;
}

void send(const Message& m) {
  if (g_sock < 0) return;
  std::string& q = backlog();
  q.append(reinterpret_cast<const char*>(&m), sizeof m);
  while (!q.empty()) {
    const ssize_t n =
        ::send(g_sock, q.data(), q.size(), MSG_DONTWAIT | launch::detail::send_nosignal_flags());
    if (n > 0) {
      q.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;  // later
    // Gone (EPIPE): forkcheck goes on (SIGPIPE is ignored); what it starts from now is reaped by
    // it alone.
    q.clear();
    if (!g_said_unguarded) {
      g_said_unguarded = true;
      std::fprintf(stderr,
                   "forkcheck: the guardian process is gone: should forkcheck itself be killed, "
                   "what it started may outlive it\n");
    }
    ::close(g_sock);
    g_sock = -1;
    return;
  }
}

}  // namespace

const std::string& run_token() {
  static const std::string token = [] {
    std::random_device rd;
    return "fc-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  }();
  return token;
}

void start_guardian() {
  if (g_sock >= 0) return;
  (void)run_token();   // fixed before the fork, so both sides agree
  Reaper::instance();  // its SIGCHLD handler is in place before the guardian can end
  launch::detail::Fd ours, theirs;
  try {
    // Close-on-exec: no child but the guardian (forked, not exec'd) holds either end.
    std::tie(ours, theirs) = launch::detail::make_socketpair(SOCK_STREAM);
  } catch (const std::exception&) {
    return;  // no guardian, as when fork() fails below
  }
  const pid_t forkcheck = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ours.reset();
    guardian_main(theirs.get(), forkcheck);
  }
  if (pid < 0) return;
  g_sock = ours.release();
  g_guardian = pid;
  note_helper_process(pid);
  Reaper::instance().watch(pid);
}

void guardian_track(ProcessId pid, std::uint64_t start_time, bool group_leader) {
  // The guardian opens its own handle from pid and start time: should the process have ended and
  // its pid been reused by then, the start time does not match and it is not tracked.
  send(Message{group_leader ? kTrackLeader : kTrackMember, pid, start_time});
}

void guardian_forget(ProcessId pid, std::uint64_t start_time) {
  if (pid == g_guardian) return;
  send(Message{kForget, pid, start_time});
}

void stop_guardian() {
  if (g_guardian <= 0) return;
  if (g_sock >= 0) {
    send(Message{kStop, 0, 0});  // it sweeps and exits (or sees forkcheck's end, or EOF)
    ::close(g_sock);
    g_sock = -1;
  }
  Reaper::instance().end_child(g_guardian, helpers()[g_guardian], 5);
  helpers().erase(g_guardian);
  g_guardian = -1;
}

void note_helper_process(ProcessId pid) {
  auto f = launch::process_facts(pid);
  helpers()[pid] = f ? f->start_time : 0;
}

bool is_helper_process(ProcessId pid) {
  auto it = helpers().find(pid);
  if (it == helpers().end()) return false;
  auto f = launch::process_facts(pid);
  return f && f->start_time == it->second;
}

}  // namespace fc::harness
