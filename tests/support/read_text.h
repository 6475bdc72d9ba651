// Small helpers the end-to-end tests share: a file's whole text, and whether text holds a piece.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fc::test_text {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace fc::test_text
