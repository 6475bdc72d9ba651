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

// The first case of `catalog_cases` whose `shows_as` holds `sign` ("stuck:lock",
// "risk:fork-with-openmp"); "" when none does.
std::string case_showing(const nlohmann::json& catalog_cases, const std::string& sign);

// Each risk of `risks` (reports::environment_risks) that a case of `catalog_cases` shows as
// ("risk:ID") gets that case's id as "case", so that its line points to the case's page.
void name_risk_cases(nlohmann::json& risks, const nlohmann::json& catalog_cases);

// What a program said of its failure, for explain_messages: its stderr, the exceptions and
// crashes its Python processes reported (ChildResult::python), and how it ended.
std::string failure_text(const std::string& stderr_text, const nlohmann::json& python,
                         const std::string& how_it_ended);

}  // namespace fc::harness
