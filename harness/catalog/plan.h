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

// The order variants start in (the reports keep the catalog's order). A variant's cost is not
// known before it runs; its program's start-up cost is (`load_s`, by program path, in any unit:
// the libraries it loads, or how long its --list took), and spawn pays it again in every worker,
// a forkserver once, fork not at all. So the working variants start costliest first: the heavy ones
// (of a program at least half as costly to start as the costliest) that spawn, then the other heavy
// ones with the light ones spread evenly between them, so that the short ones run beside longer
// ones rather than in a queue at the end. Those that mostly wait (expected hangs, parked until the
// watchdog calls time; then those with "waits_s", a wait by design such as a grace period), once
// two working ones started, one after each working one: they start early, their waits beside the
// others' work, yet never hold most of the slots while the machine idles. Ties keep the catalog's
// order. `variants[i]` has "expected", "start_method" and perhaps "waits_s"; `programs[i]` is the
// path that runs it.
std::vector<size_t> start_order(const std::vector<nlohmann::json>& variants,
                                const std::vector<std::string>& programs,
                                const std::map<std::string, double>& load_s);

}  // namespace fc::harness
