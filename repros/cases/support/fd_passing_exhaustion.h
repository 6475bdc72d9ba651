// fd-passing-exhaustion's platform part: storages in POSIX shared memory handed from workers to
// the parent over a Unix socket, by descriptor (SCM_RIGHTS) or by name, under the parent's
// RLIMIT_NOFILE. The kernel behaviour the case shows was verified on Linux
// (fd_passing_exhaustion_linux.cc); elsewhere every variant is skipped, saying why
// (fd_passing_exhaustion_other.cc).
#pragma once

#include <string>

#include "core/case_registry.h"

namespace fc::cases::fd_passing_exhaustion {

// Why the case cannot run here; "" where it can.
std::string unavailable_reason();

// Runs one variant: descriptors or names, under a low or a higher limit, as its name says.
fc::CaseResult run(const fc::VariantSpec& variant);

}  // namespace fc::cases::fd_passing_exhaustion
