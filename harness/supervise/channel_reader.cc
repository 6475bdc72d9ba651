#include "harness/supervise/channel_reader.h"

namespace fc::harness {
namespace {
constexpr size_t kMaxLine = 16u << 20;  // a result larger than this is not a result
}

void ChannelReader::feed(const char* data, size_t n, Clock::time_point now) {
  partial_.append(data, n);
  size_t pos;
  while ((pos = partial_.find('\n')) != std::string::npos) {
    line(partial_.substr(0, pos), now);
    partial_.erase(0, pos + 1);
  }
  if (partial_.size() > kMaxLine) {
    ++bad_lines_;
    partial_.clear();
  }
}

void ChannelReader::line(const std::string& text, Clock::time_point now) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    ++bad_lines_;
    return;
  }
  const std::string ev = j.value("ev", "");
  const double t = std::chrono::duration<double>(now - start_).count();
  if (ev == "result") {
    j.erase("ev");
    result_ = std::move(j);
  } else if (ev == "details") {
    if (j.contains("details") && j["details"].is_object()) early_details_.update(j["details"]);
  } else if (ev == "step" || ev == "step_done") {
    OpenStep s;
    s.pid = j.value("pid", 0);
    s.step = j.value("step", "");
    s.within_s = j.value("within_s", 2.0);
    s.begun = now;
    log_.push_back({{"event", ev == "step" ? "begin" : "end"}, {"pid", s.pid}, {"step", s.step},
                    {"t_s", t}});
    if (ev == "step") open_[{s.pid, s.step}] = s;
    else open_.erase({s.pid, s.step});
  } else {
    ++bad_lines_;
  }
}

}  // namespace fc::harness
