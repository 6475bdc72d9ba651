#include "reports/text.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include <utf8.h>

namespace fc::reports {
namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool xml_allowed(uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  if (utf8::is_valid(s.begin(), s.end())) return std::string(s);
  std::string out;
  out.reserve(s.size());
  utf8::replace_invalid(s.begin(), s.end(), std::back_inserter(out));
  return out;
}

std::string html_escape(std::string_view s) {
  const std::string v = valid_utf8(s);
  std::string out;
  out.reserve(v.size() + v.size() / 8);
  for (char c : v) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // C0 controls other than tab, newline, CR are not text in HTML (a child's ANSI colours)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out += c;
    }
  }
  return out;
}

std::string xml_safe(std::string_view s) {
  const std::string v = valid_utf8(s);
  std::string out;
  out.reserve(v.size());
  for (auto it = v.begin(); it != v.end();) {
    auto start = it;
    uint32_t cp = utf8::next(it, v.end());
    if (xml_allowed(cp)) out.append(start, it);
  }
  return out;
}

std::string md_inline(std::string_view s) {
  const std::string v = valid_utf8(s);
  std::string out;
  out.reserve(v.size() + v.size() / 8);
  for (char c : v) {
    switch (c) {
      case '\n':
        out += ' ';
        break;
      case '\r':
        break;
      case '<':
        out += "&lt;";
        break;  // no tag a child printed becomes markup
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '~':
      case '#':
        out += '\\';
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') break;  // control characters
        out += c;
    }
  }
  return out;
}

std::string md_code_block(std::string_view s) {
  std::string v;
  for (char c : valid_utf8(s))
    if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') v += c;  // no controls
  size_t longest = 0, run = 0;
  for (char c : v) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  if (!v.empty() && v.back() != '\n') v += '\n';
  return fence + "text\n" + v + fence + "\n";
}

std::string cap_text(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t head = max_bytes / 2, tail_start = s.size() - max_bytes / 2;
  while (head > 0 && is_continuation(s[head])) --head;
  while (tail_start < s.size() && is_continuation(s[tail_start])) ++tail_start;
  return s.substr(0, head) + "\n[... " + std::to_string(tail_start - head) +
         " bytes cut here; report.json has the whole text ...]\n" + s.substr(tail_start);
}

std::string one_line(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    if (ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r')
      out += ch;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string shorten(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t cut = n - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "...";
}

std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto escape = [&out](char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto b = static_cast<unsigned char>(c);
    if (b == 0) {
      out += "\\0";
      return;
    }
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  };
  auto it = s.begin();
  while (it != s.end()) {
    // [it, valid_end) is valid UTF-8: code points are kept or escaped whole.
    const auto valid_end = utf8::find_invalid(it, s.end());
    while (it != valid_end) {
      const auto start = it;
      const uint32_t cp = utf8::next(it, valid_end);
      const bool control = (cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp <= 0x9F);
      if (!control) {
        out.append(start, it);
        continue;
      }
      for (auto b = start; b != it; ++b) escape(*b);  // C1: both bytes, as the child wrote them
    }
    if (it != s.end()) escape(*it++);  // one byte that starts no valid sequence
  }
  return out;
}

std::string display(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string field(const nlohmann::json& obj, const char* key, const std::string& fallback) {
  return obj.is_object() && obj.contains(key) && !obj[key].is_null() ? display(obj[key]) : fallback;
}

}  // namespace fc::reports
