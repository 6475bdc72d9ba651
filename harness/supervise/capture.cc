#include "harness/supervise/capture.h"

#include <algorithm>
#include <vector>

namespace fc::harness {

void Capture::append(const char* data, size_t n) {
  total_ += n;
  size_t to_head = std::min(n, cap_ - head_.size());
  head_.append(data, to_head);
  data += to_head;
  n -= to_head;
  if (n == 0) return;
  if (ring_.size() != cap_) ring_.assign(cap_, '\0');
  if (n >= cap_) {  // only the last cap_ bytes of this chunk can survive
    data += n - cap_;
    n = cap_;
  }
  while (n > 0) {
    size_t k = std::min(n, cap_ - tail_pos_);
    std::copy(data, data + k, ring_.begin() + static_cast<std::ptrdiff_t>(tail_pos_));
    data += k;
    n -= k;
    tail_pos_ += k;
    if (tail_pos_ == cap_) {
      tail_pos_ = 0;
      tail_full_ = true;
    }
  }
}

std::string Capture::tail() const {
  if (!tail_full_) return ring_.substr(0, tail_pos_);
  return ring_.substr(tail_pos_) + ring_.substr(0, tail_pos_);
}

std::string Capture::text() const {
  if (dropped_bytes() == 0) return head_ + tail();
  return head_ + "\n[... forkcheck dropped " + std::to_string(dropped_bytes()) +
         " bytes of output here ...]\n" + tail();
}

std::string Capture::last_lines(size_t lines) const {
  std::string all = truncated() ? tail() : head_ + tail();
  std::vector<std::string> kept;
  size_t end = all.size();
  while (end > 0 && kept.size() < lines) {
    size_t start = all.rfind('\n', end - 1);
    size_t from = start == std::string::npos ? 0 : start + 1;
    std::string line = all.substr(from, end - from);
    if (line.find_first_not_of(" \t\r") != std::string::npos) kept.push_back(line);
    if (start == std::string::npos) break;
    end = start;
  }
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out += (out.empty() ? "" : "\n") + *it;
  return out;
}

}  // namespace fc::harness
