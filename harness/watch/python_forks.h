// A fork the shim saw, joined to what the forking Python process told forkcheck's bootstrap
// (ChildResult::python): the Python line that forked ("train.py:34 in main: w.start()") and the
// other threads by their Python names and where each was started. The child's hello names its
// parent and the parent's fork sequence number, which names the parent's fork event.
#pragma once

#include <nlohmann/json.hpp>

namespace fc::harness {

// Adds "python": {"stack", "site", "threads"} to each fork record (pair_fork_events) whose child
// said hello through the bootstrap, and names the record's threads (thread_list) by their Python
// names where their OS ids match. Before add_hazards, so the hazards say it in those words.
void add_python_sites(nlohmann::json& forks, const nlohmann::json& python_facts);

}  // namespace fc::harness
