// What every child forkcheck starts is given back (POSIX: the exec'd variants, the zygotes, so
// the variants forked from them too): see own_process.h.
#pragma once

#include "launch/start_state_posix.h"

namespace fc::harness {

// The dispositions and descriptor limit forkcheck was started with, for ChildStart::apply().
launch::detail::ChildStart inherited_child_start();

}  // namespace fc::harness
