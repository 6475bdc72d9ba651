// The watchdog's clock, and a number of seconds (as deadlines and reports count them) on it.
#pragma once

#include <chrono>

namespace fc::harness {

using Clock = std::chrono::steady_clock;

inline Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace fc::harness
