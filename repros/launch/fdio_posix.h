// File-descriptor plumbing shared by the start methods: an owning fd, pipes and socketpairs
// that are close-on-exec from birth, EINTR- and partial-write-safe I/O, SCM_RIGHTS, deadlines.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace fc::launch::detail {

// Owns one file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

[[noreturn]] void throw_errno(const char* what);
[[noreturn]] void throw_errno(int err, const char* what);

// --- what each POSIX system does its own way (fdio_linux.cc, fdio_mac.cc) ---------------------
// {read end, write end}, both close-on-exec: nothing leaks into an unrelated exec. Linux sets
// the flag atomically (pipe2); macOS has no pipe2 and sets it right after, so an exec that
// another thread makes in between may inherit the pipe (as with Python there).
std::pair<Fd, Fd> make_pipe();
// AF_UNIX socketpair of `type` (SOCK_STREAM, ...), both ends close-on-exec (Linux: SOCK_CLOEXEC;
// macOS: FD_CLOEXEC right after) and never raising SIGPIPE (macOS: SO_NOSIGPIPE on each end).
std::pair<Fd, Fd> make_socketpair(int type);
// Flags for send()/sendmsg() that turn a vanished peer into EPIPE rather than SIGPIPE (Linux:
// MSG_NOSIGNAL; macOS has none, and relies on SO_NOSIGPIPE, see make_socketpair).
int send_nosignal_flags();
// Flags for recvmsg() (Linux: MSG_CMSG_CLOEXEC, the received fds close-on-exec at birth; macOS:
// none, and recv_with_fds sets the flag right after).
int recvmsg_cloexec_flags();
// -------------------------------------------------------------------------------------------------

void set_cloexec(int fd, bool on);
void set_nonblocking(int fd);

// Writes everything, retrying on EINTR and short writes. False with errno set on failure.
bool write_all(int fd, const void* data, std::size_t len);
// The same for sockets from make_socketpair: a vanished peer is EPIPE, never SIGPIPE.
bool send_all(int fd, const void* data, std::size_t len);
// Reads until EOF (blocking). False with errno set on failure.
bool read_to_eof(int fd, std::string& out);
// Reads exactly `len` bytes unless EOF comes first; returns the count read, -1 on error.
ssize_t read_exact(int fd, void* buf, std::size_t len);

// Non-blocking drain of what is available now.
enum class DrainResult { kWouldBlock, kEof, kError };
DrainResult drain_available(int fd, std::string& out);

// sendmsg with `fds` attached to the first byte as SCM_RIGHTS, then the rest with send_all.
bool send_with_fds(int sock, const void* data, std::size_t len, const std::vector<int>& fds);
// Reads exactly `len` bytes (unless EOF), collecting any SCM_RIGHTS fds (close-on-exec).
// Returns the byte count, -1 on error.
ssize_t recv_with_fds(int sock, void* buf, std::size_t len, std::vector<Fd>& fds);

// A point in time to wait until; "forever" for timeouts too large to add to now().
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(std::chrono::milliseconds timeout);
  static Deadline forever() { return Deadline(); }
  bool expired() const;
  // Milliseconds left, rounded up, for poll(); -1 for forever.
  int poll_timeout_ms() const;

 private:
  Deadline() = default;
  bool forever_ = true;
  Clock::time_point at_{};
};

// A pidfd turns "wait for this process, with a timeout" into a poll(); Linux >= 5.3 (in
// fdio_linux.cc). An empty Fd where the kernel has none (and on macOS): callers then poll
// waitpid in growing slices.
Fd open_pidfd(pid_t pid);
// Waits until our child `pid` ends and reaps it; false when it still runs at `deadline`.
bool reap_child(pid_t pid, const Deadline& deadline);

}  // namespace fc::launch::detail
