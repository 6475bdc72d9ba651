#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <random>
#include <vector>

#include "harness/platform/process_info.h"
#include "harness/supervise/guardian.h"
#include "launch/fdio_posix.h"

namespace fc::harness {
namespace {

int g_guardian_fd = -1;

[[noreturn]] void guardian_main(int in) {
  ::setsid();  // out of forkcheck's process group and terminal: a Ctrl-C does not reach us
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  std::vector<pid_t> groups;
  pid_t pgid;
  for (;;) {
    ssize_t n = ::read(in, &pgid, sizeof pgid);
    if (n == static_cast<ssize_t>(sizeof pgid)) {
      groups.push_back(pgid);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EOF: forkcheck is gone
  }
  // Twice: a process being killed may have forked a moment before.
  for (int round = 0; round < 2; ++round) {
    for (pid_t g : groups) ::kill(-g, SIGKILL);
    for (pid_t p : processes_with_env(kRunTokenVar, run_token()))
      if (p != ::getpid()) ::kill(p, SIGKILL);
  }
  ::_exit(0);
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
  if (g_guardian_fd >= 0) return;
  (void)run_token();  // fixed before the fork, so both sides agree
  int p[2];
  try {
    auto ends = launch::detail::make_pipe();  // close-on-exec: no child but the guardian holds it
    p[0] = ends.first.release();
    p[1] = ends.second.release();
  } catch (const std::exception&) {
    return;  // no guardian, as when fork() fails below
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    guardian_main(p[0]);
  }
  ::close(p[0]);
  if (pid < 0) {
    ::close(p[1]);
    return;
  }
  g_guardian_fd = p[1];
  // The guardian is our child until we die; the reaper may reap it if it ever exits early.
}

void guardian_track_group(pid_t pgid) {
  if (g_guardian_fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(g_guardian_fd, &pgid, sizeof pgid);
}

}  // namespace fc::harness
