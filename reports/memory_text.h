// The memory facts of a run (a variant's "memory": harness/supervise/memory_watch.h) in words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/model/report_model.h"

namespace fc::reports {

// Said live when processes' private memory grew far past what it was when first seen, while
// they shared much with others then: "the private memory of 4 processes (pids 11, 12, 13, 14)
// grew from 30 MiB to 2.1 GiB each (their median) since first seen, ...: copy-on-write,
// perhaps (...)".
std::string memory_growth_text(const std::vector<int>& pids, std::uint64_t from_kib,
                               std::uint64_t to_kib);

// "RSS 812 MiB, private 790 MiB at 3.2 s (peak private 790 MiB; 12 MiB when first seen)": what
// the samples of process `pid` showed; "" when it was never sampled.
std::string process_memory_text(const Variant& variant, int pid);

// "the kernel's OOM killer: \"Memory cgroup out of memory: Killed process 4242 (python3) ...\""
// when the kernel's log names `pid` as its victim; else, where the log could not be read and the
// OOM kill counters of the tree's memory cgroups rose during the run, what they say ("the OOM
// killer killed 1 process of memory cgroup /x during the run; the kernel's log, which names its
// victims, could not be read"); else "".
std::string oom_kill_text(const Variant& variant, int pid);
bool oom_killed(const Variant& variant, int pid);

// For a finding: the processes whose private memory grew most since first seen, where any grew
// by 256 MiB and fourfold while they shared 64 MiB or more with others then; "" otherwise.
std::string memory_growth_fact(const Variant& variant);

}  // namespace fc::reports
