// What the queue's two tests share (record_queue_test.cc with threads, win32/record_queue_smoke.cc
// with processes): the messages actors send, and reading a writer to its end.
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cases/support/record_queue.h"

namespace fc::cases::record_queue::testing {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Message `k` of actor `a`: its own header, then a body whose bytes depend on (a, k); every fifth
// is 1 MiB, more than any one read or socket buffer holds.
inline std::string message(int a, int k) {
  std::string m = std::to_string(a) + " " + std::to_string(k) + "\n";
  const std::size_t body = k % 5 == 0 ? (1u << 20) : 100 + static_cast<std::size_t>(k);
  for (std::size_t i = 0; i < body; ++i) m += static_cast<char>('a' + (a * 7 + k * 3 + i) % 26);
  return m;
}

// What `w.next()` threw ("" when it returned false), with `got` the messages it returned before.
inline std::string drain(Writer& w, std::vector<std::string>& got) {
  try {
    std::string m;
    while (w.next(m)) got.push_back(m);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace fc::cases::record_queue::testing
