#include "harness/console/console_style.h"

#include <cstdlib>
#include <cstring>

#include "harness/platform/host.h"

#ifdef _WIN32
#include "harness/platform/win32.h"
#ifndef ENABLE_VIRTUAL_TERMINAL_PROCESSING  // older SDK headers
#define ENABLE_VIRTUAL_TERMINAL_PROCESSING 0x0004
#endif
#endif

namespace fc::harness {
namespace {

bool decide() {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  if (!is_terminal(1)) return false;
#ifdef _WIN32
  // A Windows console shows escape sequences only once asked to (Windows 10 and later).
  HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
  DWORD mode = 0;
  if (out == INVALID_HANDLE_VALUE || !GetConsoleMode(out, &mode)) return false;
  if (!(mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) &&
      !SetConsoleMode(out, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING))
    return false;
#endif
  return true;
}

}  // namespace

bool colour_enabled() {
  static const bool enabled = decide();
  return enabled;
}

std::string paint(Style style, const std::string& text) {
  if (!colour_enabled() || text.empty()) return text;
  const char* start = style == Style::kGood  ? "\033[32m"
                      : style == Style::kBad ? "\033[1;31m"
                                             : "\033[33m";
  return start + text + "\033[0m";
}

bool verdict_style(const std::string& word, Style& style) {
  if (word == "as expected" || word == "ok" || word == "reproduced") {
    style = Style::kGood;
    return true;
  }
  if (word == "differs" || word == "not-reproduced") {
    style = Style::kWarn;
    return true;
  }
  // "FAILED", "FAILED: HAZARDOUS FORKS", "REGRESSION", a case's "failed" and "regression".
  if (word.rfind("FAILED", 0) == 0 || word == "REGRESSION" || word == "failed" ||
      word == "regression") {
    style = Style::kBad;
    return true;
  }
  return false;
}

std::string paint_verdict(const std::string& word, std::size_t width) {
  Style style = Style::kGood;
  std::string out = verdict_style(word, style) ? paint(style, word) : word;
  if (word.size() < width) out.append(width - word.size(), ' ');
  return out;
}

}  // namespace fc::harness
