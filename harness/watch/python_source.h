// A Python script's lines as its statements nest: enough to tell a top-level statement, the
// `if __name__ == "__main__":` guard and the block that encloses a line, read by indentation (no
// parser: the script may be any Python version's). main_guard.h and worker_home.h read so.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fc::harness::python_source {

// The file's lines; none when it cannot be read.
std::vector<std::string> read_lines(const std::string& file);

// Columns before the line's first character; npos for a blank line.
inline std::size_t indent(const std::string& s) { return s.find_first_not_of(" \t"); }

inline bool blank_or_comment(const std::string& s) {
  const auto i = indent(s);
  return i == std::string::npos || s[i] == '#';
}

// `if __name__ == "__main__":` (either way round, either quote, in parentheses or not).
bool is_main_guard(const std::string& line);

}  // namespace fc::harness::python_source
