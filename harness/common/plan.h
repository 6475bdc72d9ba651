// Which variants of which cases a run will cover.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

// Cases from the catalog, in catalog order, keeping the variants that `only` selects (a glob on
// "case/variant" or on "case"; a pattern without wildcards matches as a substring). Throws
// UsageError for an unknown case id or a pattern that selects nothing.
nlohmann::json plan_cases(const nlohmann::json& catalog_cases,
                          const std::vector<std::string>& case_ids, const std::string& only);

// The order variants start in (the reports keep the catalog's order): expected hangs first, as
// they spend their time parked, waiting for the watchdog, beside the others; then the costliest
// first, so that no long variant is left to run alone at the end. A variant's cost is not known
// before it runs; its program's load time is (`load_s`, by program path), and spawn pays it
// again in every worker, a forkserver once, fork not at all. Ties keep the catalog's order.
// `variants[i]` has "expected" and "start_method"; `programs[i]` is the path that runs it.
std::vector<size_t> start_order(const std::vector<nlohmann::json>& variants,
                                const std::vector<std::string>& programs,
                                const std::map<std::string, double>& load_s);

}  // namespace fc::harness
