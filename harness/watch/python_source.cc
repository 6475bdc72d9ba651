#include "harness/watch/python_source.h"

#include <fstream>
#include <regex>

namespace fc::harness::python_source {

std::vector<std::string> read_lines(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

bool is_main_guard(const std::string& line) {
  static const std::regex guard(
      R"re(^if\s+\(?\s*(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*\)?\s*:)re");
  return std::regex_search(line, guard);
}

}  // namespace fc::harness::python_source
