// What the Windows smoke programs share: one line per check, "ok" or "FAIL" with what was seen,
// flushed at once (a run under wine may be cut short at its timeout), and the failures counted
// for the exit status.
#pragma once

#include <cstdio>
#include <string>

namespace fc::smoke {

inline int failures = 0;

inline void check(bool ok, const std::string& what, const std::string& detail = "") {
  std::printf("%s  %s%s%s\n", ok ? "ok  " : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace fc::smoke
