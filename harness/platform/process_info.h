// What the harness reads about processes it supervises (Linux: /proc; macOS: libproc and sysctl,
// process_info_mac.cc; Windows: process_info_win32.cc says what stands in for each).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/platform/process_id.h"

namespace fc::harness {

// User + system CPU time of a live process, in the OS's unit (Linux: clock ticks): callers only
// compare two readings. nullopt when it is gone or a zombie.
std::optional<uint64_t> cpu_ticks(ProcessId pid);

// Live (non-zombie) processes whose process group is `pgid`.
std::vector<ProcessId> group_members(ProcessId pgid);

// Live processes whose initial environment has NAME=VALUE, or NAME=VALUE-... (a job token within
// a run token); found even after they left every process group and session.
std::vector<ProcessId> processes_with_env(const std::string& name, const std::string& value);

// The same among `ancestor`'s descendants only, where the system keeps every one of them there
// (Linux: forkcheck is a child subreaper, so its descendants' orphans come back to it): no other
// process's environment is read (a stranger's /proc/PID/environ may block on its memory map).
// Elsewhere, processes_with_env().
std::vector<ProcessId> descendants_with_env(ProcessId ancestor, const std::string& name,
                                            const std::string& value);

// Whether `pid`'s initial environment has NAME=VALUE or NAME=VALUE-... (Windows: never known).
bool started_with_env(ProcessId pid, const std::string& name, const std::string& value);

// A running process's command line, as it has it now (Linux: /proc/PID/cmdline); empty when it
// is gone, a kernel thread, or not read on this platform (macOS, Windows: forkcheck attach is
// Linux's).
std::vector<std::string> process_command_line(ProcessId pid);

}  // namespace fc::harness
