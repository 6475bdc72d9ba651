#include "launch/fdio_posix.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <climits>
#include <cstring>
#include <system_error>

namespace fc::launch::detail {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);  // close() is not retried on EINTR: on Linux the fd is gone anyway
  fd_ = fd;
}

void throw_errno(const char* what) { throw_errno(errno, what); }

void throw_errno(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

void set_cloexec(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) throw_errno("fcntl(F_GETFD)");
  flags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
  if (::fcntl(fd, F_SETFD, flags) != 0) throw_errno("fcntl(F_SETFD)");
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) throw_errno("fcntl(O_NONBLOCK)");
}

bool write_all(int fd, const void* data, std::size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_all(int fd, const void* data, std::size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, send_nosignal_flags());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_to_eof(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

ssize_t read_exact(int fd, void* buf, std::size_t len) {
  char* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::read(fd, p + got, len - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

DrainResult drain_available(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return DrainResult::kEof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return DrainResult::kWouldBlock;
    return DrainResult::kError;
  }
}

namespace {
constexpr std::size_t kMaxFds = 4;
}

bool send_with_fds(int sock, const void* data, std::size_t len, const std::vector<int>& fds) {
  if (len == 0 || fds.size() > kMaxFds) {
    errno = EINVAL;
    return false;
  }
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  std::memset(control, 0, sizeof control);
  struct iovec iov;
  iov.iov_base = const_cast<void*>(data);
  iov.iov_len = 1;  // the fds ride on the first byte; the rest follows as plain data
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, send_nosignal_flags());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  return send_all(sock, static_cast<const char*>(data) + 1, len - 1);
}

ssize_t recv_with_fds(int sock, void* buf, std::size_t len, std::vector<Fd>& fds) {
  char* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < len) {
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    struct iovec iov;
    iov.iov_base = p + got;
    iov.iov_len = len - got;
    struct msghdr msg;
    std::memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(sock, &msg, recvmsg_cloexec_flags());
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.emplace_back(fd);
        // Already close-on-exec where recvmsg could do it (Linux); an error leaves the fd as is.
        if (recvmsg_cloexec_flags() == 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) {
      errno = EMSGSIZE;  // more fds than we asked for: refuse rather than lose some silently
      return -1;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

Deadline::Deadline(std::chrono::milliseconds timeout) {
  using std::chrono::milliseconds;
  if (timeout < milliseconds::zero()) timeout = milliseconds::zero();
  // Anything beyond a year is "forever"; it also keeps now() + timeout from overflowing.
  if (timeout > std::chrono::hours(24 * 365)) return;
  forever_ = false;
  at_ = Clock::now() + timeout;
}

bool Deadline::expired() const { return !forever_ && Clock::now() >= at_; }

int Deadline::poll_timeout_ms() const {
  if (forever_) return -1;
  auto left = at_ - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

bool reap_child(pid_t pid, const Deadline& deadline) {
  const Fd pidfd = open_pidfd(pid);
  int backoff_ms = 1;  // only without a pidfd
  for (;;) {
    pid_t r;
    do {
      r = ::waitpid(pid, nullptr, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != 0) return true;  // reaped, or not ours to reap (ECHILD): either way, gone for us
    if (deadline.expired()) return false;
    int timeout_ms = deadline.poll_timeout_ms();
    struct pollfd p = {pidfd.get(), POLLIN, 0};
    if (!pidfd) {
      if (timeout_ms < 0 || timeout_ms > backoff_ms) timeout_ms = backoff_ms;
      backoff_ms = std::min(backoff_ms * 2, 50);
    }
    ::poll(&p, pidfd ? 1 : 0, timeout_ms);
  }
}

}  // namespace fc::launch::detail
