#include "core/channel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "core/channel_io.h"
#include "launch/process.h"

namespace fc::channel {
namespace {

using detail::write_line;

// The steady clock (CLOCK_MONOTONIC on Linux): one clock for every process of the machine. The
// harness keeps its own time; this is for a person reading the log.
double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int pid() { return static_cast<int>(launch::current_process_id()); }

}  // namespace

namespace detail {

std::size_t format_step_line(char* out, std::size_t cap, const char* ev, int pid, const char* step,
                             double within_s, double t) {
  // The name is cut at a fixed length, whatever the line around it: a step's "step" and
  // "step_done" lines must carry the same name, or the harness never sees the step end.
  constexpr std::size_t kMaxEscapedName = 256;
  char tail[96];
  int tail_n;
  if (within_s < 0) {
    tail_n = std::snprintf(tail, sizeof tail, "\",\"t\":%.6f}\n", t);
  } else {
    // JSON has no inf or nan: no allowance at all is a billion seconds.
    const double w = std::isnan(within_s) ? 0.0 : std::min(within_s, 1e9);
    tail_n = std::snprintf(tail, sizeof tail, "\",\"within_s\":%.3f,\"t\":%.6f}\n", w, t);
  }
  if (tail_n < 0 || static_cast<std::size_t>(tail_n) >= sizeof tail) return 0;
  const int head_n = std::snprintf(out, cap, "{\"ev\":\"%s\",\"pid\":%d,\"step\":\"", ev, pid);
  if (head_n < 0 || static_cast<std::size_t>(head_n + tail_n) >= cap) return 0;
  std::size_t n = static_cast<std::size_t>(head_n);
  const std::size_t room = std::min(cap - static_cast<std::size_t>(tail_n),
                                    static_cast<std::size_t>(head_n) + kMaxEscapedName);
  for (const char* p = step; *p; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    char esc[8];
    int len = 1;
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = static_cast<char>(c);
      len = 2;
    } else if (c < 0x20) {
      len = std::snprintf(esc, sizeof esc, "\\u%04x", c);
    } else {
      esc[0] = static_cast<char>(c);
    }
    if (n + static_cast<std::size_t>(len) > room) {
      // A continuation byte that does not fit: drop the rest of its character too, never
      // leaving half of a UTF-8 sequence.
      if ((c & 0xC0) == 0x80) {
        while (n > static_cast<std::size_t>(head_n) &&
               (static_cast<unsigned char>(out[n - 1]) & 0xC0) == 0x80)
          --n;
        if (n > static_cast<std::size_t>(head_n) &&
            (static_cast<unsigned char>(out[n - 1]) & 0xC0) == 0xC0)
          --n;  // its lead byte
      }
      break;
    }
    std::memcpy(out + n, esc, static_cast<std::size_t>(len));
    n += static_cast<std::size_t>(len);
  }
  std::memcpy(out + n, tail, static_cast<std::size_t>(tail_n));
  return n + static_cast<std::size_t>(tail_n);
}

}  // namespace detail

void step_begin(const char* step, double within_s) {
  char buf[512];  // under PIPE_BUF: one write, never interleaved with another process's line
  const std::size_t n = detail::format_step_line(buf, sizeof buf, "step", pid(), step,
                                                 within_s < 0 ? 0 : within_s, monotonic_s());
  // (a negative allowance is none; inf and nan are handled by format_step_line)
  if (n > 0) write_line(buf, n);
}

void step_end(const char* step) {
  char buf[512];
  const std::size_t n =
      detail::format_step_line(buf, sizeof buf, "step_done", pid(), step, -1, monotonic_s());
  if (n > 0) write_line(buf, n);
}

void send_result(const nlohmann::json& result) {
  nlohmann::json line = result;
  line["ev"] = "result";
  line["pid"] = pid();
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
  nlohmann::json line = {{"ev", "details"}, {"pid", pid()}, {"details", details}};
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_line(text.data(), text.size());
}

bool connected() { return detail::channel_open(); }

}  // namespace fc::channel
