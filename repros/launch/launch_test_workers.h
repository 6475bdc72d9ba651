// Workers registered for launch_test, and the state main() sets after launch::init().
#pragma once

#include <cstddef>
#include <string>

namespace fc::launch::test_workers {

// Set by main() after init() and start_forkserver(): a fork worker sees it, a spawn or
// forkserver worker does not (Python's __main__ semantics).
extern int g_set_in_main;

constexpr std::size_t kBigResultBytes = std::size_t{1} << 20;
// What big_result returns: kBigResultBytes of a recognisable pattern.
std::string big_result_text();

}  // namespace fc::launch::test_workers
