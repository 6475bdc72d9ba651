// The memory of a watched tree's processes, sampled as the supervisor looks at the tree, and the
// kernel's out-of-memory kills among them. Facts only: reports/ puts them into words.
//
// Each process's resident and private memory (Linux: /proc/PID/smaps_rollup's Rss, Pss,
// Private_Clean + Private_Dirty) when first sampled, at its peak (of private memory) and last;
// a process born of a fork shares its parent's pages until either writes them, so its private
// memory's growth since its first sample is what copy-on-write cost it. An OOM kill is known from
// the kernel's log (/dev/kmsg, where readable: "Killed process PID") and counted by the tree's
// memory cgroups (v2 memory.events, v1 memory.oom_control: oom_kill) and the system
// (/proc/vmstat oom_kill), before and after.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/process_tree.h"

namespace fc::harness {

struct MemorySample {
  double at_s = 0;  // from the start of the run
  std::uint64_t rss_kib = 0, pss_kib = 0, private_kib = 0;
};

// The mechanism (memory_facts_linux.cc; memory_facts_other.cc knows nothing):
// What smaps_rollup says of one process now; false where it cannot be read.
bool read_memory(int pid, MemorySample& out);
// The memory cgroup process `pid` is in: "v1:/path" or "v2:/path"; "" where none is known.
std::string memory_cgroup_of(int pid);
// Its out-of-memory kills so far (oom_kill), and the system's; -1 where not readable.
long long cgroup_oom_kills(const std::string& cgroup);
long long system_oom_kills();
// The kernel's log from now on (/dev/kmsg), where readable: the OOM killer's victims written
// since, as (pid, the log's line).
class KernelLog {
 public:
  KernelLog();
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;
  bool readable() const { return fd_ >= 0; }
  std::vector<std::pair<int, std::string>> oom_kills();

 private:
  int fd_ = -1;
};

struct ProcessMemory {
  int pid = 0;
  int ppid = 0;
  std::uint64_t start_time = 0;
  std::string name;
  MemorySample first, peak, last;
  std::size_t samples = 0;
  bool grew_told = false;  // its copy-on-write growth was said live
};

// A live warning: forked processes whose private memory grew far past what they had when first
// sampled (copy-on-write of pages they share with their parent).
struct MemoryGrowth {
  std::vector<int> pids;
  std::uint64_t from_kib = 0, to_kib = 0;  // the median of their first and last private sizes
};

class MemoryWatch {
 public:
  // `started`: when the run began (samples are timed from it). Reads the OOM counters.
  explicit MemoryWatch(std::chrono::steady_clock::time_point started);
  ~MemoryWatch();
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  // Samples the processes of `look`, at most once per kEvery and within a time budget (a tree of
  // thousands is sampled in turns). Returns growth not said before, where any.
  std::optional<MemoryGrowth> sample(const launch::TreeLook& look,
                                     std::chrono::steady_clock::time_point now);
  // The record: processes (the largest kept where there are very many), the OOM kills and
  // counters (read again now).
  nlohmann::json record();

  static constexpr std::chrono::milliseconds kEvery{500};

 private:
  std::chrono::steady_clock::time_point started_, last_sample_{};
  std::map<std::pair<int, std::uint64_t>, ProcessMemory> processes_;
  std::size_t turn_ = 0;  // where the last budgeted sample stopped
  struct Oom;
  std::unique_ptr<Oom> oom_;
};

}  // namespace fc::harness
