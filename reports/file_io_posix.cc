// Reports' file I/O on POSIX (Linux and macOS): open(O_CLOEXEC), write, fsync, rename. See
// file_io.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "reports/file_io.h"
#include "reports/reporter.h"

namespace fc::reports {

namespace file_io {

std::FILE* create_for_writing(const std::filesystem::path& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
  std::string tmp = path.string() + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
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
