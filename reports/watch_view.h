// `forkcheck watch`'s judgement as every format shows it, read from its variant (role "subject",
// details.watch and details.forks, written by harness/commands/watch_command.cc): which forks fail
// the watch, which were accepted with --allow, and the findings by hazard kind with their fix.
// Like report_view.h, it reads the report and nothing else.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reports/model/report_model.h"

namespace fc::reports {

// variant.details.watch, else nullptr (not a `forkcheck watch` variant).
const WatchSummary* watch_details(const Variant& variant);

// How many forks fail the watch: hazardous, and not every hazard of a kind allowed
// (details.watch.totals.failing); 0 for any other variant.
size_t watch_failing(const Variant& variant);

// Why the watch fails, in one line: "2 hazardous forks: threads (fork 1, 3), thread-pool
// (libgomp) (fork 2)"; "" when no fork fails it. Used by the verdict and the terminal.
std::string watch_failure(const Variant& variant);

// The `forkcheck watch` variants of a report, each with its case.
struct WatchRun {
  const Case* the_case;
  const Variant* variant;
};
std::vector<WatchRun> watch_runs(const Report& report);

// Whether a watch of the report has forks that fail it.
bool any_watch_failing(const Report& report);

// The findings of a watch (details.watch.findings): one per hazard kind (and runtime), those that
// fail first, each {kind, title, allowed, forks, fork_indices, what, why, fix: [lines]}.
const std::vector<WatchFinding>& watch_findings(const Variant& variant);

// The forks listed in details.forks that had a hazard (failing or allowed), in order.
std::vector<const ForkEvent*> hazardous_forks(const Variant& variant);

// Forks that fail the watch but are not listed in details.forks (report.json lists the first
// 500 of each kind): totals.failing minus the failing forks listed.
size_t unlisted_failing(const Variant& variant);

// The hazards of a fork that fail the watch (allowed == false) or that were allowed, by title:
// "threads, thread-pool (libgomp)".
std::string fork_hazard_titles(const ForkEvent& fork, bool allowed);

// "fork 1: pid 4242 (python3 train.py) -> child 4250, no exec".
std::string fork_line(const ForkEvent& fork);

// One line naming the hazard and the fork: "hazardous fork (threads): fork 1: pid 4242 (python3
// train.py) -> child 4250, no exec"; "allowed hazardous fork (threads, --allow threads): ...".
std::string fork_failure_message(const ForkEvent& fork);

// Everything about one hazardous fork, as plain lines: each hazard (what, why; marked allowed),
// the forking thread, where it forked (its first frames), how the child ended, then "fix:" and the
// full advice, the general fix first.
std::string fork_advice_text(const ForkEvent& fork);

// "fork 1, 3, 4" from a finding's fork_indices ("and N more" when it counts more forks).
std::string finding_forks(const WatchFinding& finding);

}  // namespace fc::reports
