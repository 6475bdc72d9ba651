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
  std::int32_t op;  // kTrack or kForget
  std::int32_t pid;
  std::uint64_t start_time;
};
constexpr std::int32_t kTrack = 1, kForget = 2, kStop = 3;

int g_sock = -1;           // forkcheck's end
ProcessId g_guardian = -1;  // its pid, while it runs
bool g_said_unguarded = false;

std::set<ProcessId>& helpers() {
  static std::set<ProcessId> s;
  return s;
}

// Kills what the run left: each tracked child (and its group, while the child is unreaped), and
// every process started with the run's token. Twice: one being killed may have forked a moment
// before.
void sweep(std::map<ProcessId, ProcessHandle>& tracked) {
  for (int round = 0; round < 2; ++round) {
    for (auto& [pid, h] : tracked) {
      // Signal 0 through the handle: it still exists (alive, or a zombie nobody reaped), so the
      // group's id is still its pid, and no stranger's.
      if (h.signal(0)) ::kill(-pid, SIGKILL);
      h.signal(SIGKILL);
    }
    for (ProcessId p : processes_with_env(kRunTokenVar, run_token())) {
      if (p == ::getpid()) continue;
      auto f = launch::process_facts(p);
      if (!f) continue;
      auto h = ProcessHandle::open(p, f->start_time);
      if (h && started_with_env(p, kRunTokenVar, run_token())) h->signal(SIGKILL);
    }
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
  std::map<ProcessId, ProcessHandle> tracked;
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
      tracked.erase(m.pid);
    } else if (m.op == kTrack) {
      auto h = ProcessHandle::open(m.pid, m.start_time);
      tracked.erase(m.pid);
      if (h) tracked.emplace(m.pid, std::move(*h));
    }
  }
  sweep(tracked);
  ::_exit(0);
}

void send(const Message& m) {
  if (g_sock < 0) return;
  if (!launch::detail::send_all(g_sock, &m, sizeof m) && !g_said_unguarded) {
    // forkcheck goes on (SIGPIPE is ignored); what it starts from now is reaped by it alone.
    g_said_unguarded = true;
    std::fprintf(stderr,
                 "forkcheck: the guardian process is gone: should forkcheck itself be killed, "
                 "what it started may outlive it\n");
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
  (void)run_token();  // fixed before the fork, so both sides agree
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

void guardian_track(ProcessId pid, std::uint64_t start_time) {
  if (g_sock < 0) return;
  const Message m{kTrack, pid, start_time};
  // The guardian opens its own pidfd from pid and start time: the child is ours and unreaped, so
  // its pid cannot have been reused in between.
  send(m);
}

void guardian_forget(ProcessId pid) {
  if (g_sock < 0 || pid == g_guardian) return;
  send(Message{kForget, pid, 0});
}

void stop_guardian() {
  if (g_sock < 0) return;
  send(Message{kStop, 0, 0});  // it sweeps and exits
  ::close(g_sock);
  g_sock = -1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Reaper& reaper = Reaper::instance();
  for (;;) {
    reaper.reap();
    if (reaper.take(g_guardian)) break;
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(g_guardian, SIGKILL);  // our child, unreaped: its pid is still its own
      while (!reaper.take(g_guardian)) {
        reaper.reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  g_guardian = -1;
}

void note_helper_process(ProcessId pid) { helpers().insert(pid); }
bool is_helper_process(ProcessId pid) { return helpers().count(pid) > 0; }

}  // namespace fc::harness
