// The printed summary of `forkcheck watch`: every hazardous fork in full (where, why, what to
// do instead), the safe ones a line each, the totals.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// `forks`: fork records with hazards (fork_hazards.h); `totals`: fork_totals(forks).
std::string watch_summary(const nlohmann::json& forks, const nlohmann::json& totals);

// One line for the variant's message: "watch: 3 forks, 1 hazardous (libgomp)".
std::string watch_headline(const nlohmann::json& totals);

}  // namespace fc::harness
