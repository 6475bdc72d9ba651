// How a repro program ends: its streams flushed, then _Exit, without the static destructors.
// libtorch deregisters each of its operators in them, about 100 ms of CPU per torch process on
// the 2-core dev VM (perf stat of `forkcheck-repro-torch --start-state`: 420 ms of task-clock
// with them, 313 ms without), paid by every variant for nothing its result depends on: the
// result has gone out on the channel by then. Workers end the same way (launch's exit_child).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace fc {

[[noreturn]] inline void end_process(int code) {
  try {
    std::cout.flush();
    std::cerr.flush();
  } catch (...) {
  }
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace fc
