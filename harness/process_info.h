// What the harness reads about processes it supervises (Linux: /proc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fc::harness {

// User + system CPU time of a live process, in clock ticks; nullopt when it is gone or a zombie.
std::optional<uint64_t> cpu_ticks(pid_t pid);

// Live (non-zombie) processes whose process group is `pgid`.
std::vector<pid_t> group_members(pid_t pgid);

// Live processes whose initial environment has NAME=VALUE, or NAME=VALUE-... (a job token within
// a run token); found even after they left every process group and session.
std::vector<pid_t> processes_with_env(const std::string& name, const std::string& value);

}  // namespace fc::harness
