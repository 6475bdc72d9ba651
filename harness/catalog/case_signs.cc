#include "harness/catalog/case_signs.h"

#include <string>

namespace fc::generated {
extern const char* const kCaseSignsJson[];  // case_signs_text.cc, made by the build
}

namespace fc::harness {

const nlohmann::json& case_signs() {
  static const nlohmann::json cases = [] {
    std::string text;
    for (const char* const* piece = generated::kCaseSignsJson; *piece; ++piece) text += *piece;
    return nlohmann::json::parse(text).at("cases");
  }();
  return cases;
}

}  // namespace fc::harness
