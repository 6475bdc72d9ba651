// `forkcheck matrix`: why the program failed under a start method, and the change that fixes
// it, recognised from what that run shows (its processes' exceptions, its error output, the
// catalog's known messages) and from how the other methods' runs ended. Nothing is guessed: a
// failure with none of these signs gets no reason.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

namespace fc::reports {

struct MethodReason {
  std::string why;  // "" when the run shows no known cause
  std::string fix;
};

// `variant`: one method's variant of a matrix case; `all`: every variant of that case.
MethodReason start_method_reason(const Variant& variant, const Case& all);

// Whether a variant ran ok in all respects: outcome ok, no process of it failed, no hazardous
// fork not allowed.
bool subject_ok(const Variant& variant);

// What Python's default start method is, and what 3.14 changed, for a matrix's headline.
std::string default_method_note(const Environment& report_environment);

}  // namespace fc::reports
