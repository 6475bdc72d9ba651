// The facts of the environment fingerprint that each OS answers its own way
// (environment_linux.cc, environment_mac.cc, environment_win32.cc); environment.cc assembles them
// with what is the same everywhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::environment_platform {

// {"name", "sysname", "kernel", "kernel_build", "machine"}: name is what a person calls the OS
// ("Debian GNU/Linux 12 (bookworm)", "macOS 14.5", "Windows 10.0.20348").
nlohmann::json os_facts();

// {"name", "version"[, "release"]}: the C library the programs run on.
nlohmann::json libc_facts();

// {"online", "configured", "affinity"}: CPUs, and those this process may run on (null: unknown).
nlohmann::json cpu_facts();

// {"value", "meaning"}: Yama's ptrace_scope (Linux), which decides whether gdb may attach to a
// hung child to take its stacks; elsewhere a null value and what stands in for it.
nlohmann::json ptrace_scope();

// The CUDA driver library to load at run time ("libcuda.so.1", "nvcuda.dll"); empty where CUDA
// does not exist (macOS), with `why` saying so.
std::string cuda_driver_library(std::string& why);

}  // namespace fc::environment_platform
