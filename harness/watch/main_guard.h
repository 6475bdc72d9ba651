// Whether the Python calls that started a worker began in the main script's top level outside an
// `if __name__ == "__main__":` block, read from the script itself. Under spawn and forkserver
// every worker runs the main script again (as __mp_main__): code there that starts workers runs
// again in each, and Python refuses it ("An attempt has been made to start a new process before
// the current process has finished its bootstrapping phase"). So the advice to use spawn or
// forkserver must say to add the guard first, and only where it is missing.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct StartSite {
  enum class Guard { kGuarded, kUnguarded, kUnknown };
  // kUnknown: no Python stack, its outermost frame is not a module's top level, the file cannot
  // be read, or its top-level statement there is not one this reading is sure of.
  Guard guard = Guard::kUnknown;
  std::string file;  // the outermost frame's: the main script
  int line = 0;
};

// From a fork's Python stack ([{file, line, function}], outermost first).
StartSite start_site(const nlohmann::json& python_stack);

// exec and matrix: the start site of every fork the bootstrap saw made while other threads ran
// (ChildResult::python), for the finding's advice: [{pid, seq, guard: "guarded", "unguarded" or
// "unknown", file, line}].
nlohmann::json fork_guards(const nlohmann::json& python_facts);

}  // namespace fc::harness
