// What forkcheck asks of the machine it runs on and of its own process: the few facts whose
// answer is per OS (host_posix.cc, host_win32.cc), so the rest of the harness stays portable.
#pragma once

#include <filesystem>
#include <string>

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

}  // namespace fc::harness
