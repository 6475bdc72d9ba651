// What the harness reads about processes it supervises (Linux: /proc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace fc::harness {

// User + system CPU time of a live process, in clock ticks; nullopt when it is gone or a zombie.
std::optional<uint64_t> cpu_ticks(pid_t pid);

// Live (non-zombie) processes whose process group is `pgid`.
std::vector<pid_t> group_members(pid_t pgid);

}  // namespace fc::harness
