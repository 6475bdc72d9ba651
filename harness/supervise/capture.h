// A capped capture of a child's output stream: the first `cap` bytes and the last `cap` bytes are
// kept, whatever the child writes in between is counted and dropped. A child that floods its
// output costs the harness at most 2 * cap bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fc::harness {

class Capture {
 public:
  explicit Capture(size_t cap = 64 * 1024) : cap_(cap) {}

  void append(const char* data, size_t n);

  uint64_t total_bytes() const { return total_; }
  uint64_t dropped_bytes() const { return total_ - head_.size() - tail_size(); }
  bool truncated() const { return dropped_bytes() > 0; }
  // Head, then a marker naming how much was dropped, then the tail.
  std::string text() const;
  // The last `lines` non-empty lines (for an error message from stderr's tail).
  std::string last_lines(size_t lines) const;

 private:
  size_t tail_size() const { return tail_full_ ? cap_ : tail_pos_; }
  std::string tail() const;

  size_t cap_;
  std::string head_;
  std::string ring_;  // the tail, as a ring buffer of cap_ bytes
  size_t tail_pos_ = 0;
  bool tail_full_ = false;
  uint64_t total_ = 0;
};

}  // namespace fc::harness
