// Reports' file I/O on POSIX (Linux and macOS): open(O_CLOEXEC), write, fsync, rename. Every file
// is created with O_CREAT | O_EXCL | O_NOFOLLOW: a name someone else made (a symlink to a file of
// theirs or of the user's) makes the open fail instead of being written through. See file_io.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "reports/file_io.h"
#include "reports/reporter.h"

namespace fc::reports {
namespace {

constexpr int kCreateNew = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

}  // namespace

namespace file_io {

std::FILE* create_new_for_writing(const std::filesystem::path& path, std::string& error) {
  const int fd = ::open(path.c_str(), kCreateNew, 0644);
  if (fd < 0) {
    error = std::strerror(errno);
    return nullptr;
  }
  std::FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    error = std::strerror(errno);
    ::close(fd);
  }
  return f;
}

}  // namespace file_io

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  auto fail = [&](const std::string& what) {
    throw std::runtime_error("cannot write " + path.string() + ": " + what + ": " +
                             std::strerror(errno));
  };
  // The temporary is PATH.tmp.PID.N with the first N free: O_EXCL makes the name ours alone (two
  // writers, a stale temporary of a dead process with the same pid, a planted symlink: each is
  // passed over), and the rename below replaces whatever is at PATH, a symlink too, itself.
  const std::string prefix = path.string() + ".tmp." + std::to_string(::getpid()) + ".";
  std::string tmp;
  int fd = -1;
  for (int n = 0; fd < 0 && n < 100; ++n) {
    tmp = prefix + std::to_string(n);
    fd = ::open(tmp.c_str(), kCreateNew, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) fail("open " + tmp);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      fail("write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail("fsync");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("rename");
  }
}

}  // namespace fc::reports
