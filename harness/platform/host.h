// What forkcheck asks of the machine it runs on and of its own process: the few facts whose
// answer is per OS (host_posix.cc, host_win32.cc), so the rest of the harness stays portable.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/platform/process_id.h"

namespace fc::harness {

// The running executable's path; empty when the OS will not say.
std::filesystem::path executable_path();

// This process's id.
ProcessId current_process_id();

// The run's "platform" record: os, kernel, machine, cpus.
nlohmann::json host_platform();

// The full path of a program named without a directory, looked up as this OS does (PATH; on
// Windows also the system directories, and ".exe" added); empty when there is none.
std::string find_in_path(const std::string& name);

// Whether `path` names a program this OS would start; when not, `why` says why.
bool is_executable_file(const std::string& path, std::string& why);

// What a multiprocessing PyTorch program runs into, measured here for `forkcheck env`:
//   "os":         "Linux", "Darwin", "Windows" (uname's sysname);
//   "dev_shm":    {"path", "size_bytes", "free_bytes"}, or {"path", "absent": why} (macOS and
//                 Windows have none: torch shares tensors otherwise there);
//   "open_files": {"soft", "hard"} this process's RLIMIT_NOFILE now (null on Windows);
//   "cpus":       {"online", "affinity" (CPUs this process may run on; null when unknown),
//                  "cgroup_quota" (cgroup v2 cpu.max as CPUs, e.g. 1.5; null when none or
//                  unknown)}.
nlohmann::json machine_limits();

// The machine's load average over the last minute (-1 where the OS does not say: Windows), and
// how many CPUs are online: what "the machine is overloaded" rests on.
double load_average();
unsigned cpu_count();

// Whether forkcheck's stdout (1) or stderr (2) is a terminal: the live status line and colour
// are drawn only there.
bool is_terminal(int stream);

// Writes what stdout (1) or stderr (2) takes now, without waiting for a slow reader (a pipe
// nobody reads, a stopped pager): returns how many bytes of `data` were written. The watchdog's
// loop writes the program's output live, and must never block on it.
std::size_t write_what_fits(int stream, const char* data, std::size_t n);

// This process's environment variables, name and value, in the order the OS keeps them.
std::vector<std::pair<std::string, std::string>> environment_variables();

}  // namespace fc::harness
