// What the program's own Python processes said through forkcheck's bootstrap
// (ChildResult::python, supervise/python_channel.h), for the report's Environment: the program's
// interpreter, its start method, and its torch and threads as it ran them, not a fresh
// interpreter's. In the shape of `forkcheck env`'s Python side (python_probe.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// `facts`: ChildResult::python (null when no Python process of the tree spoke); `root_pid`: the
// program's own process; `program`: what was run (a Python interpreter's name says one should
// have spoken). Null when the program is not Python and none spoke.
nlohmann::json program_python_environment(const nlohmann::json& facts, int root_pid,
                                          const std::string& program);

}  // namespace fc::harness
