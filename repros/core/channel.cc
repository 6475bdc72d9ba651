#include "core/channel.h"

#include <chrono>
#include <cstdio>
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

void step_begin(const char* step, double within_s) {
  char buf[512];
  int n =
      std::snprintf(buf, sizeof buf,
                    "{\"ev\":\"step\",\"pid\":%d,\"step\":\"%s\",\"within_s\":%.3f,\"t\":%.6f}\n",
                    pid(), step, within_s, monotonic_s());
  if (n > 0) write_line(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

void step_end(const char* step) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf,
                        "{\"ev\":\"step_done\",\"pid\":%d,\"step\":\"%s\",\"t\":%.6f}\n", pid(),
                        step, monotonic_s());
  if (n > 0) write_line(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
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
