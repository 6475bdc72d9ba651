#include "harness/supervise/channel_reader.h"

#include <cmath>
#include <cstring>

#include "reports/text.h"

namespace fc::harness {
namespace {

constexpr size_t kMaxLine = 16u << 20;  // a result larger than this is not a result
constexpr size_t kShownBytes = 1024;    // of a bad line, in the report
constexpr int kMaxDepth = 64;           // nested objects and arrays: no message needs more
constexpr double kMaxWithin = 86400;    // a step's allowance: a day

// Whether `text` nests objects and arrays deeper than kMaxDepth: checked before parsing, since
// copying and destroying a parsed value recurse as deep as it nests (a line of 100,000 '['
// would overflow the stack).
bool too_deep(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// Why `j[key]` is not what a message may hold there (`type` names it); "" when it is, or absent.
std::string wrong_type(const nlohmann::json& j, const char* key, const char* type,
                       bool (nlohmann::json::*is)() const noexcept) {
  if (!j.contains(key) || (j[key].*is)()) return "";
  return std::string("\"") + key + "\" is not " + type;
}

// What is wrong with a message, by its kind; "" when nothing is.
std::string check(const nlohmann::json& j, const std::string& ev) {
  using J = nlohmann::json;
  std::string why;
  auto need = [&](const char* key, const char* type, bool (J::*is)() const noexcept) {
    if (why.empty()) why = wrong_type(j, key, type, is);
  };
  if (ev == "result") {
    need("outcome", "a string", &J::is_string);
    need("message", "a string", &J::is_string);
    need("details", "an object", &J::is_object);
  } else if (ev == "details") {
    if (!j.contains("details")) return "a details message without \"details\"";
    need("details", "an object", &J::is_object);
  } else if (ev == "step" || ev == "step_done") {
    if (!j.contains("pid") || !j.contains("step")) return "a step without \"pid\" or \"step\"";
    need("pid", "an integer", &J::is_number_integer);
    need("step", "a string", &J::is_string);
    need("within_s", "a number", &J::is_number);
    if (why.empty() && j.contains("within_s")) {
      const double w = j["within_s"].get<double>();
      if (!std::isfinite(w) || w <= 0 || w > kMaxWithin)
        why = "\"within_s\" is not a number of seconds from 0 to a day";
    }
  } else {
    return "unknown \"ev\": \"" + ev + "\"";
  }
  return why;
}

}  // namespace

void ChannelReader::feed(const char* data, size_t n, Clock::time_point now) {
  // The rest of a line already found too long: dropped up to its newline.
  if (skipping_) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
    if (!nl) return;
    skipping_ = false;
    n -= static_cast<size_t>(nl + 1 - data);
    data = nl + 1;
  }
  // The search for a newline starts where the last one stopped (a long line written a byte at a
  // time is scanned once), and lines are erased once per feed: linear time, however the child
  // writes.
  const size_t searched = partial_.size();
  partial_.append(data, n);
  size_t start = 0, pos, from = searched;
  while ((pos = partial_.find('\n', from)) != std::string::npos) {
    // After the first bad line the child is a protocol-error whatever it says next: its lines are
    // only counted.
    if (bad_lines_ > 0)
      ++bad_lines_;
    else
      line(partial_.substr(start, pos - start), now);
    start = from = pos + 1;
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxLine) {
    bad(partial_, "a line longer than 16 MiB");
    partial_.clear();
    skipping_ = true;
  }
}

void ChannelReader::bad(const std::string& text, const std::string& why) {
  if (bad_lines_++ > 0) return;
  bad_line_ = reports::terminal_safe(text.substr(0, kShownBytes)) +
              (text.size() > kShownBytes ? "... (" + std::to_string(text.size()) + " bytes)" : "");
  bad_why_ = why;
}

void ChannelReader::line(const std::string& text, Clock::time_point now) {
  if (too_deep(text)) return bad(text, "nested deeper than 64 levels");
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad(text, "not JSON");
  if (!j.is_object()) return bad(text, "not a JSON object");
  if (!j.contains("ev") || !j["ev"].is_string()) return bad(text, "no \"ev\" string");
  const std::string ev = j["ev"].get<std::string>();
  if (const std::string why = check(j, ev); !why.empty()) return bad(text, why);
  const double t = std::chrono::duration<double>(now - start_).count();
  if (ev == "result") {
    j.erase("ev");
    result_ = std::move(j);
  } else if (ev == "details") {
    early_details_.update(j["details"]);
  } else {
    OpenStep s;
    s.pid = j["pid"].get<int>();
    s.step = j["step"].get<std::string>();
    s.within_s = j.contains("within_s") ? j["within_s"].get<double>() : 2.0;
    s.begun = now;
    log_.push_back(
        {{"event", ev == "step" ? "begin" : "end"}, {"pid", s.pid}, {"step", s.step}, {"t_s", t}});
    if (ev == "step")
      open_[{s.pid, s.step}] = s;
    else
      open_.erase({s.pid, s.step});
  }
}

}  // namespace fc::harness
