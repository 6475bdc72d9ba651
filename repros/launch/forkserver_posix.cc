// forkserver: a server forked while the process still has one thread forks each worker on
// request, so workers start from that clean early state rather than from the threaded parent.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "launch/fdio_posix.h"
#include "launch/forkserver_protocol_posix.h"
#include "launch/ptracer.h"
#include "launch/start_methods.h"
#include "launch/worker_child_posix.h"
#include "launch/worker_impl_posix.h"

namespace fc::launch {
namespace {

using detail::Fd;
using detail::StatusMessage;

// ---------------------------------------------------------------------------------------------
// Server side. Single-threaded: poll() on the control socket and on a self-pipe that the SIGCHLD
// handler writes a byte to (POSIX everywhere; Linux's signalfd would do, macOS has none).

int g_sigchld_pipe_w = -1;  // the server's self-pipe, write end; -1 outside the server

void on_sigchld(int) {
  const int saved = errno;
  if (g_sigchld_pipe_w >= 0) (void)!::write(g_sigchld_pipe_w, "c", 1);  // full: a wake-up is due
  errno = saved;
}

class Server {
 public:
  explicit Server(int control_fd) : control_fd_(control_fd) {}

  [[noreturn]] void run() {
    if (!setup_signals()) ::_exit(1);
    for (;;) {
      struct pollfd fds[2] = {{control_fd_, POLLIN, 0}, {sigchld_fd_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        ::_exit(1);
      }
      if (fds[1].revents != 0) reap();
      // EOF (or garbage) on the control socket: the parent is gone, and so is our reason to be.
      if (fds[0].revents != 0 && !serve_one()) ::_exit(0);
    }
  }

 private:
  bool setup_signals() {
    try {
      auto [r, w] = detail::make_pipe();
      detail::set_nonblocking(r.get());
      detail::set_nonblocking(w.get());
      sigchld_fd_ = r.release();
      g_sigchld_pipe_w = w.release();
    } catch (const std::exception&) {
      return false;
    }
    // Our handler, which must not be SIG_IGN (children would reap themselves); Ctrl-C aimed at
    // the process group is for the parent, which closes our socket when it dies (Python's
    // forkserver too). SIGCHLD unblocked, whatever the parent's mask was: it is how we learn.
    struct sigaction chld {};
    chld.sa_handler = &on_sigchld;
    chld.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&chld.sa_mask);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    return ::sigaction(SIGCHLD, &chld, &saved_chld_) == 0 &&
           ::sigaction(SIGINT, &ign, &saved_int_) == 0 &&
           ::sigprocmask(SIG_UNBLOCK, &mask, &saved_mask_) == 0;
  }

  // Reads one request and forks its worker. False when the control socket is done.
  bool serve_one() {
    detail::RequestHeader h{};
    std::vector<Fd> fds;
    if (detail::recv_with_fds(control_fd_, &h, sizeof h, fds) != static_cast<ssize_t>(sizeof h))
      return false;
    if (h.magic != detail::kRequestMagic || h.name_len > detail::kMaxNameLen || fds.size() != 2)
      return false;
    std::string name(h.name_len, '\0');
    std::string payload(static_cast<std::size_t>(h.payload_len), '\0');
    if (detail::read_exact(control_fd_, name.data(), name.size()) !=
            static_cast<ssize_t>(name.size()) ||
        detail::read_exact(control_fd_, payload.data(), payload.size()) !=
            static_cast<ssize_t>(payload.size())) {
      return false;
    }
    Fd result_w = std::move(fds[0]);
    Fd status = std::move(fds[1]);

    // SIGCHLD blocked across fork, so that our handler never runs in the child: it restores
    // the parent's handler and mask before it unblocks anything.
    sigset_t chld, unblocked;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, &unblocked);
    const pid_t pid = ::fork();
    if (pid == 0) run_worker(name, payload, result_w.get(), status.get());
    const int fork_errno = errno;
    ::sigprocmask(SIG_SETMASK, &unblocked, nullptr);
    if (pid < 0) {
      send_status(status.get(), {detail::kForkFailed, fork_errno});
      return true;
    }
    result_w.reset();
    send_status(status.get(), {detail::kPid, pid});
    status_fds_[pid] = status.release();
    return true;
  }

  [[noreturn]] void run_worker(const std::string& name, const std::string& payload, int result_fd,
                               int status_fd) {
    allow_supervisor_ptrace();  // a new task: forkcheck's debugger may attach to it too
    // The worker runs like a fork worker: the parent's signal set-up, none of the server's fds.
    ::sigaction(SIGCHLD, &saved_chld_, nullptr);
    ::sigaction(SIGINT, &saved_int_, nullptr);
    ::close(control_fd_);
    ::close(sigchld_fd_);
    ::close(g_sigchld_pipe_w);
    g_sigchld_pipe_w = -1;
    ::sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
    ::close(status_fd);
    for (const auto& [pid, fd] : status_fds_) ::close(fd);
    detail::exit_child(detail::run_named_worker(name, payload, result_fd));
  }

  void reap() {
    char bytes[64];
    while (::read(sigchld_fd_, bytes, sizeof bytes) > 0) {
    }
    // SIGCHLDs coalesce: collect every child that has ended, not one per signal.
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid < 0 && errno == EINTR) continue;
      if (pid <= 0) return;
      auto it = status_fds_.find(pid);
      if (it == status_fds_.end()) continue;
      send_status(it->second, {detail::kWaitStatus, status});
      ::close(it->second);
      status_fds_.erase(it);
    }
  }

  static void send_status(int fd, StatusMessage m) {
    detail::send_all(fd, &m, sizeof m);  // EPIPE: the client dropped its Worker; nothing to do
  }

  int control_fd_;
  int sigchld_fd_ = -1;  // the self-pipe's read end
  sigset_t saved_mask_{};
  struct sigaction saved_chld_ {};
  struct sigaction saved_int_ {};
  std::map<pid_t, int> status_fds_;  // running workers -> their status socket
};

// ---------------------------------------------------------------------------------------------
// Client side.

struct Client {
  // One request at a time on the control socket. A forked child re-creates it in place: its
  // copy may be held by a thread that does not exist there.
  std::mutex send_mu;
  std::atomic<pid_t> owner{-1};  // the process that started the server; others inherited it
  int control_fd = -1;           // guarded by send_mu
  pid_t server_pid = -1;         // guarded by send_mu
};

Client& client() {
  static auto* c = new Client();  // never destroyed: workers may be joined from static dtors
  return *c;
}

// Called with send_mu held, after the control socket failed: the next start() starts anew.
void drop_server_locked(Client& c) {
  if (c.control_fd >= 0) ::close(c.control_fd);
  c.control_fd = -1;
  if (c.server_pid > 0) ::waitpid(c.server_pid, nullptr, WNOHANG);
  c.server_pid = -1;
  c.owner.store(-1);
}

// At exit of the process that started the server: close the control socket and wait for the
// server to go, so that nothing of ours outlives this process (supervisors and the test suite
// look for leftovers right after it ends). Bounded: a stray fork may still hold the socket.
void stop_forkserver_at_exit() {
  Client& c = client();
  if (c.owner.load() != ::getpid()) return;  // a forked child calling exit(): not its server
  pid_t server;
  {
    std::lock_guard<std::mutex> lock(c.send_mu);
    if (c.control_fd >= 0) ::close(c.control_fd);
    c.control_fd = -1;
    server = c.server_pid;
    c.server_pid = -1;
    c.owner.store(-1);
  }
  if (server <= 0) return;
  if (!detail::reap_child(server, detail::Deadline(std::chrono::seconds(2)))) {
    ::kill(server, SIGKILL);
    detail::reap_child(server, detail::Deadline::forever());
  }
}

}  // namespace

void start_forkserver() {
  Client& c = client();
  if (c.owner.load() == ::getpid()) return;
  // Not started by this process. Starting needs a single thread, so from here on no other
  // thread can race us.
  detail::forkserver_forget_inherited();
  const int threads = thread_count();
  if (threads > 1) {
    throw std::logic_error("start_forkserver: the process already has " + std::to_string(threads) +
                           " threads; start the forkserver first thing in main()");
  }
  auto [client_end, server_end] = detail::make_socketpair(SOCK_STREAM);
  std::cout.flush();
  std::fflush(nullptr);  // or the server's copy of the buffers reaches stdout from its workers
  const pid_t pid = ::fork();
  if (pid < 0) detail::throw_errno("fork (forkserver)");
  if (pid == 0) {
    allow_supervisor_ptrace();  // the server is in the tree forkcheck takes stacks of
    client_end.reset();
    try {
      Server(server_end.release()).run();
    } catch (...) {
      // Never unwind into the parent's stack frames, which this process has a copy of.
    }
    ::_exit(1);
  }
  server_end.reset();
  {
    std::lock_guard<std::mutex> lock(c.send_mu);
    c.control_fd = client_end.release();
    c.server_pid = pid;
  }
  c.owner.store(::getpid());
  static const bool stop_registered = std::atexit(stop_forkserver_at_exit) == 0;
  (void)stop_registered;
}

namespace detail {

void forkserver_forget_inherited() noexcept {
  // No locking: this runs in a forked child (one thread), where the mutex is a copy that a
  // thread which does not exist here may hold. A new one takes its place (storage reuse).
  Client& c = client();
  const pid_t owner = c.owner.load();
  if (owner == -1 || owner == ::getpid()) return;
  if (c.control_fd >= 0) ::close(c.control_fd);
  c.control_fd = -1;
  c.server_pid = -1;
  new (&c.send_mu) std::mutex();
  c.owner.store(-1);
}

std::unique_ptr<Worker::Impl> start_forkserver_worker(const std::string& name,
                                                      const std::string& payload_text,
                                                      StartTime started) {
  start_forkserver();  // no-op once started; throws std::logic_error in a threaded process
  auto [result_r, result_w] = make_pipe();
  auto [status_mine, status_theirs] = make_socketpair(SOCK_STREAM);
  const RequestHeader h{kRequestMagic, static_cast<std::uint32_t>(name.size()),
                        static_cast<std::uint64_t>(payload_text.size())};
  {
    Client& c = client();
    std::lock_guard<std::mutex> lock(c.send_mu);
    if (c.control_fd < 0) throw std::system_error(ENOTCONN, std::generic_category(), "forkserver");
    if (!send_with_fds(c.control_fd, &h, sizeof h, {result_w.get(), status_theirs.get()}) ||
        !send_all(c.control_fd, name.data(), name.size()) ||
        !send_all(c.control_fd, payload_text.data(), payload_text.size())) {
      const int err = errno;
      drop_server_locked(c);  // a half-sent request leaves the stream unusable anyway
      throw_errno(err, "forkserver: sending the request");
    }
  }
  result_w.reset();
  status_theirs.reset();  // the server holds its copy now; its close tells us it is done

  StatusMessage m{};
  const ssize_t n = read_exact(status_mine.get(), &m, sizeof m);
  if (n < 0) throw_errno("forkserver: reading the worker's pid");
  if (n != static_cast<ssize_t>(sizeof m)) {
    throw std::system_error(EPIPE, std::generic_category(),
                            "forkserver: closed the status channel before reporting a pid");
  }
  if (m.tag == kForkFailed) throw_errno(m.value, "forkserver: fork");
  if (m.tag != kPid || m.value <= 0) {
    throw std::system_error(EPROTO, std::generic_category(), "forkserver: unexpected reply");
  }
  return Worker::Impl::for_forkserver(name, static_cast<pid_t>(m.value), std::move(result_r),
                                      std::move(status_mine), started);
}

}  // namespace detail
}  // namespace fc::launch
