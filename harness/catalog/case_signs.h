// What each case's failure shows as, compiled into forkcheck (repros/case_signs.json, written by
// ci/case-signs.py from the repro programs' own --list and checked against it by the test
// repros.case_signs_current): the error messages a case explains, and the wait or environment
// risk it shows as. A user's failed program is matched against them without starting any
// program, and in a package whose torch cases are not built yet as well.
#pragma once

#include <nlohmann/json.hpp>

namespace fc::harness {

// [{"id", "title", "program", "explains": [{"pattern", "fix"}], "shows_as": [...]}], in the
// catalog's order: the shape of Catalog::cases that known_messages.h reads.
const nlohmann::json& case_signs();

}  // namespace fc::harness
