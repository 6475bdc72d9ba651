// process_handle.h on Linux and macOS. pidfd_open and pidfd_send_signal are called through
// syscall(): glibc wraps them only from 2.36, and the build machine's kernel headers say whether
// the numbers exist (they do since Linux 5.3); without them, the pid and start time are checked.
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "harness/platform/process_handle.h"
#include "launch/process_tree.h"

namespace fc::harness {
namespace {

int pidfd_open_raw(ProcessId pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    // pidfds are close-on-exec from birth (O_CLOEXEC is implied): no child inherits them.
    return static_cast<int>(fd);
  }
#else
  (void)pid;
#endif
  return -1;
}

bool same_process(ProcessId pid, std::uint64_t start_time) {
  auto f = launch::process_facts(pid);
  return f && f->start_time == start_time;
}

}  // namespace

std::optional<ProcessHandle> ProcessHandle::open(ProcessId pid, std::uint64_t start_time) {
  if (pid <= 0) return std::nullopt;
  const int fd = pidfd_open_raw(pid);
  // Checked after the open: the pidfd names whatever process had the pid then; if that was
  // still the one that started at `start_time`, it names that one for good.
  if (!same_process(pid, start_time)) {
    if (fd >= 0) ::close(fd);
    return std::nullopt;
  }
  return ProcessHandle(pid, start_time, fd);
}

ProcessHandle::ProcessHandle(ProcessHandle&& o) noexcept
    : pid_(o.pid_), start_time_(o.start_time_), pidfd_(std::exchange(o.pidfd_, -1)) {}

ProcessHandle& ProcessHandle::operator=(ProcessHandle&& o) noexcept {
  if (this != &o) {
    if (pidfd_ >= 0) ::close(pidfd_);
    pid_ = o.pid_;
    start_time_ = o.start_time_;
    pidfd_ = std::exchange(o.pidfd_, -1);
  }
  return *this;
}

ProcessHandle::~ProcessHandle() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ProcessHandle::signal(int sig) const {
#ifdef SYS_pidfd_send_signal
  if (pidfd_ >= 0) return ::syscall(SYS_pidfd_send_signal, pidfd_, sig, nullptr, 0) == 0;
#endif
  if (!same_process(pid_, start_time_)) return false;
  return ::kill(pid_, sig) == 0;
}

bool ProcessHandle::ended() const {
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};  // readable once the process has exited
    return ::poll(&p, 1, 0) == 1;
  }
  auto f = launch::process_facts(pid_);
  return !f || f->start_time != start_time_ || f->zombie();
}

}  // namespace fc::harness
