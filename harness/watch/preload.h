// How `forkcheck watch` gets its shim into a program: where libforkcheck_watch is, and the
// environment that makes the dynamic loader preload it (inherited by the whole process tree;
// the shim keeps it in the environment of everything exec'd below).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fc::harness {

inline constexpr const char* kWatchDirVar = "FORKCHECK_WATCH_DIR";    // where the shim writes
inline constexpr const char* kWatchShimVar = "FORKCHECK_WATCH_SHIM";  // overrides the search

// The environment to add to the watched command: the loader's preload variable with the shim
// first (before whatever the caller's environment already preloads) and the events directory.
// Throws UsageError when this platform or this program cannot be watched (naming why), and
// std::runtime_error when the shim is missing from the installation.
std::vector<std::pair<std::string, std::string>> watch_environment(const std::string& program,
                                                                   const std::string& events_dir);

// The shim's path: $FORKCHECK_WATCH_SHIM, else bin/../lib (build tree), bin/../lib/forkcheck
// (installed), bin/ (install_layout.h).
// Empty when it is nowhere; `looked` lists where it looked.
std::string find_watch_shim(std::string* looked = nullptr);

}  // namespace fc::harness
