// How forkcheck writes durations, CPU times and counts, in both programs: the harness and its
// reports (reports/text.h hands these on) and the repro programs' own messages. Header-only, like
// core/outcome.h, so that neither side links the other to say "1.2 s" the same way.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace fc {

// A duration as a person reads it: "35 ms", "1.2 s".
inline std::string format_seconds(double s) {
  char buf[32];
  if (s < 0.9995)  // what would round to "1000 ms" is "1.0 s"
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1000.0);
  else
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// A duration to a tenth of a second, for deadlines and stalls: "0.5 s", "12.0 s".
inline std::string format_tenths(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// CPU time: "0 ms", "under 0.1 ms", "0.4 ms", "812 ms", "2.3 s". A blocked tree's CPU is often
// well under a millisecond: to a tenth of one, and "under" where even that would round to none,
// so that a little is never shown as nothing.
inline std::string format_cpu(double s) {
  if (s <= 0) return "0 ms";
  if (s < 0.00005) return "under 0.1 ms";
  char buf[32];
  if (s < 0.00995)  // each rule up to what would round into the next: "9.9 ms", then "10 ms"
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  else if (s < 0.9995)
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// "1 process", "3 processes".
inline std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace fc
