// Causes and fixes from shapes: the table of failures whose shape a run shows (a wait chain, the
// Python stacks, an exception, how a worker ended), each from a public source that says why it
// happens and what to change, each with a program in tests/python_programs/causes/ that shows it
// and a test that applies its fix. Beside the catalog's `explains` (messages a case's failure
// shows as): these are shapes of a user's own program. No rule, no fix: where a rule's shape is
// only partly seen, the cause says what is missing and no fix is given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

namespace fc::reports {

struct CauseRule {
  const char* id;
  const char* shape;    // the failure, in a line
  const char* source;   // the public page that explains it
  const char* program;  // its program, under tests/python_programs/causes/
};

// Every rule, in the order they are tried.
const std::vector<CauseRule>& cause_rules();

// The shape of rule `id`, in a line ("" for none): matrix's why, the same under every method.
std::string cause_shape(const std::string& id);

struct KnownCause {
  std::string rule;
  std::string source;
  std::string cause;    // why, with this run's facts (pids, lines)
  std::string fix;      // the change, naming the line where it is known; "" where not all seen
  std::string missing;  // what of the shape was not seen, when something was not
};

// The first rule whose shape the variant (a failed run of a user's program) shows; nothing when
// none does. report.json's `cause` (run_log.cc folds it in).
std::optional<KnownCause> known_cause(const Variant& variant);

nlohmann::json to_json(const KnownCause& c);

}  // namespace fc::reports
