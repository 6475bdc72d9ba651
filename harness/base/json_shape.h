// JSON that another process sent (a repro program's catalog, the zygote's answers) or that a
// saved file holds is checked before it is used: a value of the wrong type is named in one line
// ("\"variants\" is a number (3), not an array") where nlohmann's type_error, thrown from deep
// inside the run, would name neither the field nor who sent it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

enum class JsonKind { kString, kNonEmptyString, kObject, kArray, kBoolean, kInteger, kNumber };

// nlohmann's message without its "[json.exception.type_error.302] " prefix: for the one line that
// says a saved file could not be read, where no check named the field first.
std::string json_error_text(const nlohmann::json::exception& e);

// What `j` is, for a message: "a number (3)", "a string (\"x\")", "an array", "null".
std::string json_kind(const nlohmann::json& j);

// Whether `j` is of `kind`.
bool is_kind(const nlohmann::json& j, JsonKind kind);

// "" when obj[key] is of `kind` (or absent, when not `required`); else why not, naming the key:
// "\"id\" is missing", "\"id\" is a number (7), not a string". `obj` must be an object.
std::string member_problem(const nlohmann::json& obj, const char* key, JsonKind kind,
                           bool required = true);

}  // namespace fc::harness
