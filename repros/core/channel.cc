#include "core/channel.h"

#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace fc::channel {
namespace {

int channel_fd() {
  // Read once: getenv is not async-signal-safe, and the fd never changes within a process tree.
  static const int fd = [] {
    const char* s = std::getenv("FORKCHECK_CHANNEL_FD");
    return s ? std::atoi(s) : -1;
  }();
  return fd;
}

void write_line(const char* buf, size_t len) {
  int fd = channel_fd();
  if (fd < 0) fd = STDERR_FILENO;
  while (len > 0) {
    ssize_t n = ::write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the harness is gone: nothing useful left to do with the line
    buf += n;
    len -= static_cast<size_t>(n);
  }
}

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

void step_begin(const char* step, double within_s) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf,
                        "{\"ev\":\"step\",\"pid\":%d,\"step\":\"%s\",\"within_s\":%.3f,\"t\":%.6f}\n",
                        static_cast<int>(getpid()), step, within_s, monotonic_s());
  if (n > 0) write_line(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

void step_end(const char* step) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "{\"ev\":\"step_done\",\"pid\":%d,\"step\":\"%s\",\"t\":%.6f}\n",
                        static_cast<int>(getpid()), step, monotonic_s());
  if (n > 0) write_line(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

void send_result(const nlohmann::json& result) {
  nlohmann::json line = result;
  line["ev"] = "result";
  line["pid"] = static_cast<int>(getpid());
  if (!connected()) {
    std::cout << line.dump(2) << std::endl;
    return;
  }
  // A result can exceed PIPE_BUF and so is not one atomic write: cases send it after their workers
  // were joined, when nothing else in the tree is writing.
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_line(text.data(), text.size());
}

void send_details(const nlohmann::json& details) {
  nlohmann::json line = {{"ev", "details"}, {"pid", static_cast<int>(getpid())}, {"details", details}};
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_line(text.data(), text.size());
}

bool connected() { return channel_fd() >= 0; }

}  // namespace fc::channel
