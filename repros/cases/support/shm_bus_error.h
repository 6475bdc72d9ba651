// shm-bus-error's platform part: a private tmpfs of a chosen size (a mount namespace of the
// variant's own, which only Linux has: shm_bus_error_linux.cc), workers filling shared storage
// files in it, the parent mapping them. Elsewhere every variant is skipped, saying why
// (shm_bus_error_other.cc).
#pragma once

#include <string>

#include "core/case_registry.h"

namespace fc::cases::shm_bus_error {

// Why a private tmpfs cannot be mounted here; "" where it can. Linux: tried in a child process
// (unshare, mount), so the reason is the errno the kernel gave.
std::string unavailable_reason();

// Runs one variant: its storage directory is a small tmpfs, a big one, or a directory on disk,
// as the variant's name says.
fc::CaseResult run(const fc::VariantSpec& variant);

}  // namespace fc::cases::shm_bus_error
