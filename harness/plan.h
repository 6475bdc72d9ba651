// Which variants of which cases a run will cover.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

// Cases from the catalog, in catalog order, keeping the variants that `only` selects (a glob on
// "case/variant" or on "case"; a pattern without wildcards matches as a substring). Throws
// UsageError for an unknown case id or a pattern that selects nothing.
nlohmann::json plan_cases(const nlohmann::json& catalog_cases,
                          const std::vector<std::string>& case_ids, const std::string& only);

}  // namespace fc::harness
