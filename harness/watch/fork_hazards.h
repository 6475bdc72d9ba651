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

// What to do instead, for a hazardous fork: the general fix first, then each hazard's own.
std::vector<std::string> fork_advice(const nlohmann::json& hazards);

// Totals over the fork records: {forks, hazardous, exec, safe, runtimes: [runtimes named]}.
nlohmann::json fork_totals(const nlohmann::json& forks);

}  // namespace fc::harness
