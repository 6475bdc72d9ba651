// Between process_win32.cc, which keeps the handles inherit_in_spawned_workers() was given, and
// spawn_win32.cc, which hands them to every worker it starts.
#pragma once

#include <vector>

#include "launch/win32.h"

namespace fc::launch::detail {

// The handles every spawned worker inherits besides its own pipes and standard handles.
std::vector<HANDLE> handles_spawned_workers_inherit();

}  // namespace fc::launch::detail
