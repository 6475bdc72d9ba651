// The environment a tree's child starts with: forkcheck's own, with the variables the job sets in
// place of the same names. What those are is decided here, once; the OS parts only hand the
// result to the child (supervisor_posix.cc as envp; Windows builds its sorted block from the spec
// itself, for names compare without case there).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/supervise/supervisor.h"

namespace fc::harness {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// What the Python bootstrap needs (LaunchSpec::python_bootstrap): its folder first on PYTHONPATH
// (its sitecustomize runs the one it shadows) before the PYTHONPATH the child would have had
// (`spec.env`'s, else `inherited_pythonpath`, which may be null); the channel it talks on; where
// it may keep its bytecode; the signals it listens for.
EnvVars python_bootstrap_env(const LaunchSpec& spec, const std::string& channel_address,
                             int dump_signal, int stacks_signal, const char* inherited_pythonpath);

// `inherited` ("NAME=value" entries) with `vars` in place of the same names: each name once, the
// last value given for it. FORKCHECK_CHANNEL_FD is never inherited: a child without a channel
// must not write to a descriptor forkcheck's own parent gave it.
std::vector<std::string> child_environment(const std::vector<std::string>& inherited,
                                           const EnvVars& vars);

}  // namespace fc::harness
