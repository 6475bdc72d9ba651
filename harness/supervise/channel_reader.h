// Reads the repro channel (JSON lines, see repros/core/channel.h): keeps the case's result and the
// hazardous steps that were announced and have not reported back yet. A line that is not a
// forkcheck message (not JSON, not an object, an unknown "ev", a field of the wrong type) is kept,
// first one only, with why: the variant is then a protocol-error, and nothing it said is thrown.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/supervise/clock.h"

namespace fc::harness {

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
  // The first bad line (control bytes escaped, at most 1 KiB) and what was wrong with it.
  const std::string& bad_line() const { return bad_line_; }
  const std::string& bad_why() const { return bad_why_; }

 private:
  void line(const std::string& text, Clock::time_point now);
  void bad(const std::string& text, const std::string& why);

  Clock::time_point start_;
  std::string partial_;
  std::optional<nlohmann::json> result_;
  nlohmann::json early_details_ = nlohmann::json::object();
  std::map<std::pair<int, std::string>, OpenStep> open_;
  nlohmann::json log_ = nlohmann::json::array();
  size_t bad_lines_ = 0;
  std::string bad_line_, bad_why_;
  bool skipping_ = false;  // in the rest of a line found too long
};

}  // namespace fc::harness
