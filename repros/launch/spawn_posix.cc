// spawn: exec a fresh copy of this program (Boost.Process v1) that runs only the named worker.
// The payload travels as JSON text; launch::init() on the other side reads it and runs it.
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "launch/boost_process_v1.h"
#include "launch/fdio_posix.h"
#include "launch/process.h"
#include "launch/ptracer.h"
#include "launch/start_methods.h"
#include "launch/worker_child_posix.h"
#include "launch/worker_impl_posix.h"

namespace fc::launch {
namespace {

constexpr const char* kWorkerFlag = "--fc-worker";
constexpr const char* kPayloadFdFlag = "--fc-payload-fd";
constexpr const char* kResultFdFlag = "--fc-result-fd";

std::string self_exe() {
  std::string path = self_executable_path();
  if (path.empty())
    throw std::system_error(std::make_error_code(std::errc::no_such_file_or_directory),
                            "spawn: this program's own path is unknown");
  return path;
}

int parse_fd(const char* s) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > INT_MAX) return -1;
  return static_cast<int>(v);
}

// Set by init(): a program that never calls it would, when spawned, run its whole main() again
// instead of the worker (and might spawn again, and again).
std::atomic<bool> g_init_called{false};

[[noreturn]] void bad_worker_command_line(const char* why) {
  std::fprintf(stderr, "forkcheck: bad worker command line: %s\n", why);
  std::fflush(stderr);
  ::_exit(2);
}

}  // namespace

namespace detail {

std::unique_ptr<Worker::Impl> start_spawn(const std::string& name, const std::string& payload_text,
                                          StartTime started, const std::string& program) {
  if (!g_init_called.load()) {
    throw std::logic_error("spawn needs fc::launch::init(argc, argv) first thing in main()");
  }
  const std::string exe = program.empty() ? self_exe() : program;
  // A socketpair rather than a pipe for the payload: send(MSG_NOSIGNAL) turns a worker that
  // died before reading into EPIPE instead of SIGPIPE in the parent.
  auto [payload_r, payload_w] = make_socketpair(SOCK_STREAM);
  auto [result_r, result_w] = make_pipe();
  const int keep[2] = {payload_r.get(), result_w.get()};
  const std::vector<std::string> args = {kWorkerFlag,    name,
                                         kPayloadFdFlag, std::to_string(keep[0]),
                                         kResultFdFlag,  std::to_string(keep[1])};

  std::error_code ec;
  pid_t failed_pid = -1;
  pid_t pid = -1;
  try {
    bp::child child(
        bp::exe = exe, bp::args = args, bp::error = ec,
        // Runs in the forked child before execve: everything we create is close-on-exec, so
        // open exactly the two fds the worker needs. Only fcntl here (async-signal-safe).
        bp::extend::on_exec_setup([keep](auto&) {
          for (int fd : keep) {
            const int flags = ::fcntl(fd, F_GETFD);
            if (flags < 0 || ::fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) ::_exit(127);
          }
        }),
        // With bp::error set, a failed exec is reported here (not thrown) with the pid of the
        // child that failed, which we must reap ourselves.
        bp::extend::on_error([&failed_pid](auto& exec, const std::error_code&) {
          if (exec.pid > 0) failed_pid = exec.pid;
        }));
    if (!ec) {
      // bp's ~child/running() would waitpid and steal the status: the pid is ours to manage.
      child.detach();
      pid = child.id();
    }
  } catch (const bp::process_error& e) {
    ec = e.code();
  }
  if (failed_pid > 0) {
    while (::waitpid(failed_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (ec || pid <= 0) {
    throw std::system_error(ec ? ec : std::make_error_code(std::errc::io_error), "spawn " + exe);
  }

  payload_r.reset();
  result_w.reset();
  // If the worker died before reading its payload, its exit status will tell; nothing to add.
  send_all(payload_w.get(), payload_text.data(), payload_text.size());
  // shutdown, not just close: a child another thread forks meanwhile may hold a copy of this fd,
  // and the worker reads until EOF.
  ::shutdown(payload_w.get(), SHUT_WR);
  payload_w.reset();
  return Worker::Impl::for_child(name, StartMethod::kSpawn, pid, std::move(result_r), started);
}

}  // namespace detail

void init(int argc, char** argv) {
  g_init_called.store(true);
  // A spawned worker is a new task (its parent forked it): it names forkcheck's debugger anew.
  // Harmless in a program forkcheck exec'd, which has that declaration already.
  allow_supervisor_ptrace();
  if (argc < 2 || std::strcmp(argv[1], kWorkerFlag) != 0) return;
  if (argc != 7 || std::strcmp(argv[3], kPayloadFdFlag) != 0 ||
      std::strcmp(argv[5], kResultFdFlag) != 0) {
    bad_worker_command_line("expected --fc-worker NAME --fc-payload-fd N --fc-result-fd M");
  }
  const std::string name = argv[2];
  const int payload_fd = parse_fd(argv[4]);
  const int result_fd = parse_fd(argv[6]);
  if (payload_fd < 0 || result_fd < 0) bad_worker_command_line("bad fd number");
  // Back to close-on-exec: whatever the worker itself execs must not hold our result pipe.
  ::fcntl(payload_fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(result_fd, F_SETFD, FD_CLOEXEC);

  std::string payload_text;
  if (!detail::read_to_eof(payload_fd, payload_text)) {
    const int err = errno;
    std::fprintf(stderr, "forkcheck: reading the worker payload: %s\n", std::strerror(err));
    detail::exit_child(2);
  }
  ::close(payload_fd);
  detail::exit_child(detail::run_named_worker(name, payload_text, result_fd));
}

}  // namespace fc::launch
