// This process, as each OS has it: the few facts and services the repro programs need whose
// answer is per OS, so that the cases and the repro core stay portable. The siblings:
// process_posix.cc (Linux and macOS alike), process_linux.cc, process_mac.cc, process_win32.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <forkcheck/launch.h>

namespace fc::launch {

// The running program's full path, UTF-8 (Linux: /proc/self/exe; macOS: _NSGetExecutablePath,
// resolved; Windows: GetModuleFileNameW); empty when the OS will not say.
std::string self_executable_path();

// This process's id.
ProcessId current_process_id();

// A signal's abbreviation, without "SIG" ("SEGV", as glibc's sigabbrev_np says it), and the
// system's description of it ("Segmentation fault", as strsignal says it). A signal without a
// name gets its number. Windows knows only the C standard's signals (and SIGBREAK).
std::string signal_abbrev(int sig);
std::string signal_description(int sig);

// pthread_atfork. Windows has no fork(): throws std::logic_error (the catalog skips every fork
// variant there, so no case gets this far).
void at_fork(void (*prepare)(), void (*parent)(), void (*child)());

// Zero-filled memory that fork children share with this process (MAP_SHARED | MAP_ANONYMOUS),
// for what fork workers coordinate through. Windows has no fork(): throws std::logic_error.
void* map_fork_shared(std::size_t bytes);
void unmap_fork_shared(void* p, std::size_t bytes);

// Windows: the handle with this value is inherited by every worker that spawn starts from now
// on, beside the worker's own pipes (e.g. the harness's channel, which workers write to as well).
// POSIX: nothing to do; a descriptor without FD_CLOEXEC survives exec anyway.
void inherit_in_spawned_workers(std::uintptr_t handle);

}  // namespace fc::launch
