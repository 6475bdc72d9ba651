#include "harness/base/glob_match.h"

#include <cstddef>

namespace fc::harness {
namespace {

// Matches the bracket expression starting at pattern[p] (just past '[') against `c`. Sets `end`
// to the index after the closing ']'; false when the expression is not closed (then fnmatch
// takes '[' as a plain character).
bool bracket(std::string_view pattern, size_t p, char c, bool& matched, size_t& end) {
  bool negate = false;
  if (p < pattern.size() && (pattern[p] == '!' || pattern[p] == '^')) {
    negate = true;
    ++p;
  }
  bool hit = false;
  bool first = true;  // a ']' right after '[' or '[!' is a member, not the end
  while (p < pattern.size() && (first || pattern[p] != ']')) {
    first = false;
    char lo = pattern[p];
    if (lo == '\\' && p + 1 < pattern.size()) lo = pattern[++p];
    ++p;
    char hi = lo;
    if (p + 1 < pattern.size() && pattern[p] == '-' && pattern[p + 1] != ']') {
      hi = pattern[p + 1];
      if (hi == '\\' && p + 2 < pattern.size()) hi = pattern[++p + 1];
      p += 2;
    }
    if (lo <= c && c <= hi) hit = true;
  }
  if (p >= pattern.size()) return false;
  end = p + 1;
  matched = hit != negate;
  return true;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  // Where to resume after the last '*': its pattern position and how much text it has taken.
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        bool matched = false;
        size_t end = 0;
        if (bracket(pattern, p + 1, text[t], matched, end)) {
          if (matched) {
            p = end;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else {
        char lit = pc;
        size_t next = p + 1;
        if (pc == '\\') {
          lit = p + 1 < pattern.size() ? pattern[p + 1]
                                       : '\0';  // a trailing backslash matches nothing
          next = p + 2;
        }
        if (lit == text[t] && lit != '\0') {
          p = next;
          ++t;
          continue;
        }
      }
    }
    // A mismatch: let the last '*' take one more character, or fail.
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace fc::harness
