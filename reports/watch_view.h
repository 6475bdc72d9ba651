// `forkcheck watch`'s judgement as every format shows it, read from its variant (role "subject",
// details.watch and details.forks, written by harness/commands/watch_command.cc): which forks fail
// the watch, which were accepted with --allow, and the findings by hazard kind with their fix.
// Like report_view.h, it reads the report and nothing else.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::reports {

// variant.details.watch when it is an object, else nullptr (not a `forkcheck watch` variant).
const nlohmann::json* watch_details(const nlohmann::json& variant);

// How many forks fail the watch: hazardous, and not every hazard of a kind allowed
// (details.watch.totals.failing); 0 for any other variant.
size_t watch_failing(const nlohmann::json& variant);

// Why the watch fails, in one line: "2 hazardous forks: threads (fork 1, 3), thread-pool
// (libgomp) (fork 2)"; "" when no fork fails it. Used by the verdict and the terminal.
std::string watch_failure(const nlohmann::json& variant);

// The `forkcheck watch` variants of a report, each with its case.
struct WatchRun {
  const nlohmann::json* the_case;
  const nlohmann::json* variant;
};
std::vector<WatchRun> watch_runs(const nlohmann::json& report);

// Whether a watch of the report has forks that fail it.
bool any_watch_failing(const nlohmann::json& report);

// The findings of a watch (details.watch.findings): one per hazard kind (and runtime), those that
// fail first, each {kind, title, allowed, forks, fork_indices, what, why, fix: [lines]}.
const nlohmann::json& watch_findings(const nlohmann::json& variant);

// The forks listed in details.forks that had a hazard (failing or allowed), in order.
std::vector<const nlohmann::json*> hazardous_forks(const nlohmann::json& variant);

// Forks that fail the watch but are not listed in details.forks (report.json lists the first
// 500 of each kind): totals.failing minus the failing forks listed.
size_t unlisted_failing(const nlohmann::json& variant);

// The hazards of a fork that fail the watch (allowed == false) or that were allowed, by title:
// "threads, thread-pool (libgomp)".
std::string fork_hazard_titles(const nlohmann::json& fork, bool allowed);

// "fork 1: pid 4242 (python3 train.py) -> child 4250, no exec".
std::string fork_line(const nlohmann::json& fork);

// One line naming the hazard and the fork: "hazardous fork (threads): fork 1: pid 4242 (python3
// train.py) -> child 4250, no exec"; "allowed hazardous fork (threads, --allow threads): ...".
std::string fork_failure_message(const nlohmann::json& fork);

// Everything about one hazardous fork, as plain lines: each hazard (what, why; marked allowed),
// the forking thread, where it forked (its first frames), how the child ended, then "fix:" and the
// full advice, the general fix first.
std::string fork_advice_text(const nlohmann::json& fork);

// "fork 1, 3, 4" from a finding's fork_indices ("and N more" when it counts more forks).
std::string finding_forks(const nlohmann::json& finding);

}  // namespace fc::reports
