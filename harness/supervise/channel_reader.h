// Reads the repro channel (JSON lines, see repros/core/channel.h): keeps the case's result and the
// hazardous steps that were announced and have not reported back yet.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

using Clock = std::chrono::steady_clock;

struct OpenStep {
  int pid = 0;
  std::string step;
  double within_s = 2.0;
  Clock::time_point begun;
};

class ChannelReader {
 public:
  explicit ChannelReader(Clock::time_point start) : start_(start) {}

  void feed(const char* data, size_t n, Clock::time_point now);

  const std::optional<nlohmann::json>& result() const { return result_; }
  // Details sent before the result (see channel::send_details), merged in arrival order.
  const nlohmann::json& early_details() const { return early_details_; }
  std::map<std::pair<int, std::string>, OpenStep>& open_steps() { return open_; }
  const std::map<std::pair<int, std::string>, OpenStep>& open_steps() const { return open_; }
  // Every step event with the harness's time (seconds since the child started), for the report.
  const nlohmann::json& step_log() const { return log_; }
  size_t bad_lines() const { return bad_lines_; }

 private:
  void line(const std::string& text, Clock::time_point now);

  Clock::time_point start_;
  std::string partial_;
  std::optional<nlohmann::json> result_;
  nlohmann::json early_details_ = nlohmann::json::object();
  std::map<std::pair<int, std::string>, OpenStep> open_;
  nlohmann::json log_ = nlohmann::json::array();
  size_t bad_lines_ = 0;
};

}  // namespace fc::harness
