// What the OS and the machine are, the same for every process on them: the start of every
// environment fingerprint. forkcheck says them itself for a user's program (whose own libraries
// its Python side reports); a repro program adds what it loads (core/environment.h). Each OS
// answers its own way in host_facts_linux.cc, host_facts_mac.cc and host_facts_win32.cc;
// host_facts.cc assembles them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::launch {

// {"collected_by": {"program", "pid"}, "os", "libc", "cpus", "start_methods" (those this platform
// has: Windows has spawn alone), "ptrace_scope", "variables" (those set of the variables that
// change how OpenMP, BLAS, CUDA or fork safety behave)}; `program` names who collected them.
nlohmann::json host_environment(const std::string& program);

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

}  // namespace fc::launch
