#include "harness/base/json_shape.h"

namespace fc::harness {
namespace {

const char* kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return "a string";
    case JsonKind::kNonEmptyString:
      return "a non-empty string";
    case JsonKind::kObject:
      return "an object";
    case JsonKind::kArray:
      return "an array";
    case JsonKind::kBoolean:
      return "a boolean";
    case JsonKind::kInteger:
      return "an integer";
    case JsonKind::kNumber:
      return "a number";
  }
  return "?";
}

}  // namespace

std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2)
                                                                            : what;
}

std::string json_kind(const nlohmann::json& j) {
  // A short sample of a scalar: enough to recognise it, never a whole document.
  auto sample = [&j] {
    std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return " (" + text + ")";
  };
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string" + sample();
    case nlohmann::json::value_t::boolean:
      return "a boolean" + sample();
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number" + sample();
    default:
      return "not a JSON value";
  }
}

bool is_kind(const nlohmann::json& j, JsonKind kind) {
  switch (kind) {
    case JsonKind::kString:
      return j.is_string();
    case JsonKind::kNonEmptyString:
      return j.is_string() && !j.get_ref<const std::string&>().empty();
    case JsonKind::kObject:
      return j.is_object();
    case JsonKind::kArray:
      return j.is_array();
    case JsonKind::kBoolean:
      return j.is_boolean();
    case JsonKind::kInteger:
      return j.is_number_integer();
    case JsonKind::kNumber:
      return j.is_number();
  }
  return false;
}

std::string member_problem(const nlohmann::json& obj, const char* key, JsonKind kind,
                           bool required) {
  const auto it = obj.find(key);
  if (it == obj.end()) return required ? "\"" + std::string(key) + "\" is missing" : "";
  if (is_kind(*it, kind)) return "";
  return "\"" + std::string(key) + "\" is " + json_kind(*it) + ", not " + kind_name(kind);
}

}  // namespace fc::harness
