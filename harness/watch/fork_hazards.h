// Which forks were hazardous, and why, from what the parent held at the moment it forked.
//
// A fork whose child called exec is never hazardous: the new program starts clean (a failed
// exec counts as exec too: such a child only reports the failure and exits). Otherwise each of
// these is one hazard:
//   thread-pool  a thread-pool runtime had live worker threads (libgomp, libomp, libiomp5, MKL,
//                BLIS, TBB), named by the library that started them. OpenBLAS's workers are
//                not counted: OpenBLAS stops its pool in its own fork handler, before the fork.
//   threads      other threads were running (the child gets only the forking thread; a lock any
//                other one held stays locked in the child for good)
//   cuda         CUDA had been initialised (the child's first CUDA call fails)
// A single-threaded fork without exec is not hazardous.
//
// `forkcheck watch` fails on a hazardous fork unless the user accepted its kind knowingly
// (`--allow KIND`): judge_forks marks what was allowed, and findings groups the hazards by kind
// (and runtime) with the full advice for each.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

// The hazards of one fork record (pair_fork_events): a list, empty when the fork was safe. Each
// hazard: {kind, runtime (thread-pool, cuda), threads (thread-pool, threads), what, why, instead}.
nlohmann::json fork_hazards(const nlohmann::json& fork);

// Adds "hazards" (and "notes", for what was seen but is not a hazard) to every fork record.
void add_hazards(nlohmann::json& forks);

// A fork record's Python stack (its "python" facts, from the bootstrap), or null.
nlohmann::json python_stack_of(const nlohmann::json& fork);

// What to do instead, for a hazardous fork: the general fix first, then each hazard's own. With
// the fork's Python stack: where the worker was started at the main script's top level with no
// `if __name__ == "__main__":` guard (main_guard.h), the general fix says to add it first, since
// spawn and forkserver fail without it.
std::vector<std::string> fork_advice(const nlohmann::json& hazards,
                                     const nlohmann::json& python_stack = nlohmann::json());

// The hazard kinds, in the order above: what `--allow` takes. Ids are stable (report.json).
const std::vector<std::string>& hazard_kinds();

// Whether `kind` is one of hazard_kinds().
bool is_hazard_kind(const std::string& kind);

// After add_hazards: the forks judged, `allowed` being the kinds accepted knowingly. Each hazard
// of an allowed kind gets "allowed": true; a hazardous fork gets "advice" (fork_advice: the full
// fix) and "allowed": true when every one of its hazards was allowed, false when one was not
// (such a fork fails the watch).
void judge_forks(nlohmann::json& forks, const std::vector<std::string>& allowed);

// Totals over the fork records: {forks, hazardous, failing (hazardous and not allowed), allowed
// (hazardous, every hazard allowed), exec, safe, runtimes: [runtimes named]}.
nlohmann::json fork_totals(const nlohmann::json& forks);

// The hazards found, one finding per kind (and runtime, for thread-pool), those that fail first:
// {kind, runtime (thread-pool, cuda), title ("thread-pool (libgomp)"), allowed, forks (how many),
// fork_indices (the first 20 forks' "index"), what (of the first such fork), why, fix (the
// general fix, then the hazard's own)}. An empty array when no fork was hazardous.
nlohmann::json hazard_findings(const nlohmann::json& forks);

}  // namespace fc::harness
