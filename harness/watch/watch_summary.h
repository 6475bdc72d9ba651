// The printed summary of `forkcheck watch`: every hazardous fork in full (where, why, what to
// do instead; "ALLOWED" instead of "HAZARD" when --allow accepted its kinds), the safe ones a line
// each, the totals, and the judgement.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// `forks`: fork records with hazards (fork_hazards.h); `totals`: fork_totals(forks).
std::string watch_summary(const nlohmann::json& forks, const nlohmann::json& totals);

// One line for the variant's message: "watch: 3 forks, 1 hazardous (libgomp)", and ", 1 of them
// allowed" when kinds were accepted with --allow.
std::string watch_headline(const nlohmann::json& totals);

// The last lines printed: what watch concluded and the exit status it gives: "FAILED: 1
// hazardous fork (threads) (exit status 1)" and the --allow that would accept it; "ok: ..."; or,
// when the program itself failed, "FAILED: the program failed (PROGRAM_FAILURE) (exit status 1)"
// where `program_failure` says how ("error, its own exit status 3"; empty: it ended ok), and the
// hazardous forks it also made. "FAILED" and "ok" are coloured on a terminal
// (console/console_style.h). `findings`: hazard_findings(forks).
std::string watch_judgement(const nlohmann::json& totals, const nlohmann::json& findings,
                            int exit_status, const std::string& program_failure);

}  // namespace fc::harness
