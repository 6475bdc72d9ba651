// The words of `forkcheck watch`'s hazards: what a hazardous fork had, why it goes wrong in the
// child, and what to do instead. harness/watch/fork_hazards.cc finds the hazards (facts: a kind,
// a runtime, counts, the threads' names, where it forked) and takes their words from here, so
// that the prose lives in reports/ alone.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace fc::reports {

// A thread-pool runtime's hazard ("libgomp", "libomp", "libiomp5", "MKL", "BLIS", "TBB"), with
// `threads` of its workers alive: {"what", "why", "instead"}.
nlohmann::json thread_pool_hazard_words(const std::string& runtime, std::size_t threads);

// Other threads running: `names` ("\"loader\" (started at t.py:4 in <module>), ..."), `site`
// where it forked in Python ("" when not known).
nlohmann::json threads_hazard_words(std::size_t threads, const std::string& names,
                                    const std::string& site);

// CUDA initialised in the parent, with `devices` devices.
nlohmann::json cuda_hazard_words(std::size_t devices);

// What was seen but is not a hazard: a runtime whose own fork handler stops its pool, and a
// libcuda loaded but not initialised.
std::string pool_not_counted_note(const std::string& runtime, std::size_t threads);
std::string cuda_loaded_note();

// The general fix, first in every hazardous fork's advice: start the worker with spawn or
// forkserver; with `unguarded_at` ("train.py:12", where the worker was started at the main
// script's top level with no `if __name__ == "__main__":`), put it under that guard first.
std::string start_worker_otherwise(const std::string& unguarded_at);

}  // namespace fc::reports
