#include "launch/start_state_posix.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>  // struct linux_dirent64 is spelled out below: getdents64 is async-signal-safe
#endif

namespace fc::launch::detail {
namespace {

bool kept(int fd, const int* keep, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i] == fd) return true;
  return false;
}

// Calls f(fd) for every open descriptor >= 3. No allocation: safe between fork and exec.
template <typename F>
void for_each_fd_from_3(F f) {
#ifdef __linux__
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        unsigned short reclen;
        __builtin_memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char* name = buf + off + 19;
        int fd = 0;
        bool number = *name != '\0';
        for (const char* p = name; *p; ++p) {
          if (*p < '0' || *p > '9')
            number = false;
          else
            fd = fd * 10 + (*p - '0');
        }
        if (number && fd >= 3 && fd != dir) f(fd);
        off += reclen;
      }
    }
    ::close(dir);
    return;
  }
#endif
  rlimit lim{};
  long max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                 ? static_cast<long>(lim.rlim_cur)
                 : 65536;
  if (max > (1L << 20)) max = 1L << 20;
  for (int fd = 3; fd < max; ++fd)
    if (::fcntl(fd, F_GETFD) >= 0) f(fd);
}

}  // namespace

IgnoredSignals IgnoredSignals::of_this_process() {
  IgnoredSignals s;
  for (int sig = 1; sig < kCount && sig < NSIG; ++sig) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) s.ignored[sig] = true;
  }
  return s;
}

void reset_signals(const IgnoredSignals& ignored) {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < IgnoredSignals::kCount && sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sa.sa_handler = ignored.ignored[sig] ? SIG_IGN : SIG_DFL;
    ::sigaction(sig, &sa, nullptr);  // EINVAL for the few the C library keeps to itself: fine
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void restore_descriptor_limit(std::uint64_t soft) {
  if (soft == 0) return;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  lim.rlim_cur = static_cast<rlim_t>(soft);
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

void cloexec_from_3(int keep) {
#if defined(SYS_close_range) && defined(__linux__)
  constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)
  const unsigned k = keep >= 3 ? static_cast<unsigned>(keep) : 0u;
  bool done = true;
  if (k == 0) {
    done = ::syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec) == 0;
  } else {
    done = (k == 3 || ::syscall(SYS_close_range, 3u, k - 1, kCloseRangeCloexec) == 0) &&
           ::syscall(SYS_close_range, k + 1, ~0u, kCloseRangeCloexec) == 0;
  }
  if (done) return;
#endif
  for_each_fd_from_3([keep](int fd) {
    if (fd != keep) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  });
}

void close_from_3(const int* keep, std::size_t n_keep) {
  // Collected first: closing while /proc/self/fd is read would change what it lists.
  int fds[1024];
  std::size_t n = 0;
  bool more = true;
  while (more) {
    n = 0;
    more = false;
    for_each_fd_from_3([&](int fd) {
      if (kept(fd, keep, n_keep)) return;
      if (n < sizeof fds / sizeof fds[0])
        fds[n++] = fd;
      else
        more = true;
    });
    for (std::size_t i = 0; i < n; ++i) ::close(fds[i]);
  }
}

}  // namespace fc::launch::detail
