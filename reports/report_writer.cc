#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "reports/reporter.h"

namespace fc::reports {

std::vector<std::unique_ptr<Reporter>> all_reporters() {
  std::vector<std::unique_ptr<Reporter>> r;
  r.push_back(make_json_reporter());
  r.push_back(make_html_reporter());
  r.push_back(make_junit_reporter());
  r.push_back(make_markdown_reporter());
  return r;
}

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

std::vector<std::filesystem::path> write_reports(const nlohmann::json& report,
                                                 const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> written;
  for (const auto& r : all_reporters()) {
    auto path = dir / r->file_name();
    write_file_atomically(path, r->render(report));
    written.push_back(path);
  }
  return written;
}

}  // namespace fc::reports
