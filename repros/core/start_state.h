// What this process started with, for `forkcheck-repro --start-state`: the tests check that a copy
// forked by the zygote starts as an exec'd one does (only stdio and the channel open, an empty
// signal mask, the dispositions the harness inherited). Siblings: start_state_posix.cc,
// start_state_win32.cc.
#pragma once

#include <nlohmann/json.hpp>

namespace fc {

// {"fds": [open descriptors], "blocked": [signals], "ignored": [signals]}; Windows: {"note": why
// not}.
nlohmann::json start_state();

}  // namespace fc
