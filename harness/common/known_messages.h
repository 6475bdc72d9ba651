// Which of the catalog's cases explains a failed program's messages: every case carries the
// error messages its failure shows as (its "explains" patterns, repros/core/case_registry.h), and
// a program whose error output, exceptions or crash say one of them is seeing that case's
// failure. The catalog is asked only when something failed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// The cases of `catalog_cases` (Catalog::cases) whose patterns `text` contains, each once, in the
// catalog's order: [{"case", "title", "pattern", "fix"}].
nlohmann::json explain_messages(const nlohmann::json& catalog_cases, const std::string& text);

// What a program said of its failure, for explain_messages: its stderr, the exceptions and
// crashes its Python processes reported (ChildResult::python), and how it ended.
std::string failure_text(const std::string& stderr_text, const nlohmann::json& python,
                         const std::string& how_it_ended);

}  // namespace fc::harness
