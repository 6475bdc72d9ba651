// The channel on POSIX: FORKCHECK_CHANNEL_FD is a file descriptor, inherited through fork, exec
// (spawn) and the forkserver alike. See channel_io.h.
#include <errno.h>
#include <unistd.h>

#include <cstdlib>

#include "core/channel_io.h"

namespace fc::channel::detail {
namespace {

int channel_fd() {
  // Read once: getenv is not async-signal-safe, and the fd never changes within a process tree.
  static const int fd = [] {
    const char* s = std::getenv("FORKCHECK_CHANNEL_FD");
    return s ? std::atoi(s) : -1;
  }();
  return fd;
}

}  // namespace

bool channel_open() { return channel_fd() >= 0; }

void write_line(const char* buf, std::size_t len) {
  int fd = channel_fd();
  if (fd < 0) fd = STDERR_FILENO;
  while (len > 0) {
    ssize_t n = ::write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the harness is gone: nothing useful left to do with the line
    buf += n;
    len -= static_cast<std::size_t>(n);
  }
}

}  // namespace fc::channel::detail
