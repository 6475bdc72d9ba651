// Text that came from somewhere else (a child's output, a library's message) made safe for each
// format. Every string a reporter writes goes through one of these: a child may print anything,
// invalid UTF-8 and control characters included.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/quantity_text.h"

namespace fc::reports {

// Invalid UTF-8 sequences replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

// For HTML text and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view s);

// For XML 1.0 (before the writer escapes it): valid UTF-8, and without the characters XML 1.0
// does not allow even as references (C0 controls other than tab, newline, CR; U+FFFE, U+FFFF).
std::string xml_safe(std::string_view s);

// Markdown inline text (a table cell, a list item): one line, the characters that would start
// markup or close a cell escaped, HTML tags neutralised.
std::string md_inline(std::string_view s);

// A fenced code block whose fence no line of `s` can close.
std::string md_code_block(std::string_view s);

// At most `max_bytes`: the head and the tail of `s`, and between them a line saying how much was
// cut. Cuts fall on UTF-8 character boundaries.
std::string cap_text(const std::string& s, size_t max_bytes);
// How much of a bad protocol line a report shows: the harness keeps 1 KiB; a foreign report may
// not.
constexpr size_t kProtocolLineCap = 4 * 1024;

// Runs of white space (newlines included) as one space, none at either end: Python wraps some
// messages over lines.
std::string one_line(std::string_view s);

// `s` in at most `n` bytes (n >= 4): cut at a UTF-8 character boundary, "..." after the cut.
std::string shorten(const std::string& s, size_t n);

// For a terminal: what a child printed, shown without letting it drive the terminal. C0 control
// bytes but newline and tab, DEL, and the C1 controls (U+0080..U+009F, C2 80..C2 9F in UTF-8: a
// terminal may take U+009B as CSI) become visible escapes, "\x1b"; a NUL becomes "\0", so the
// text after it is still shown. A byte that is not part of valid UTF-8 is escaped the same way
// (a terminal not in UTF-8 mode reads a lone 0x9B as CSI). Valid UTF-8 is kept as it is, and so
// is a backslash: this is for a person to read, not to be unescaped.
std::string terminal_safe(std::string_view s);

// A JSON value as a person reads it: strings unquoted, the rest as compact JSON.
std::string display(const nlohmann::json& v);

// obj[key] as text, whatever its type; `fallback` when obj is not an object, lacks the key or
// holds null there. Reports from elsewhere (an older forkcheck, a hand-edited file) may differ.
std::string field(const nlohmann::json& obj, const char* key, const std::string& fallback = "");

// Whether `s` ends with `tail`.
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// `s`, or `fallback` where it is empty: a word a report lacks, shown as "?" (or "skip").
inline std::string or_else(const std::string& s, const char* fallback) {
  return s.empty() ? std::string(fallback) : s;
}
inline std::string or_else(const std::string& s, const std::string& fallback) {
  return s.empty() ? fallback : s;
}

// The one way durations, CPU times and counts are written (core/quantity_text.h, which the repro
// programs use too): "35 ms", "0.5 s", "0.4 ms" of CPU, "3 processes".
using fc::counted;
using fc::format_cpu;
using fc::format_seconds;
using fc::format_tenths;

}  // namespace fc::reports
