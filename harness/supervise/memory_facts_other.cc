// Elsewhere than Linux, no process's memory or OOM kill is read (memory_watch.h).
#include "harness/supervise/memory_watch.h"

namespace fc::harness {

bool read_memory(int, MemorySample&) { return false; }
std::string memory_cgroup_of(int) { return ""; }
long long cgroup_oom_kills(const std::string&) { return -1; }
long long system_oom_kills() { return -1; }
KernelLog::KernelLog() = default;
KernelLog::~KernelLog() = default;
std::vector<std::pair<int, std::string>> KernelLog::oom_kills() { return {}; }

}  // namespace fc::harness
