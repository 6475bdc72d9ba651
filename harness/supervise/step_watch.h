// When an announced step is hung (the watchdog's rule, on every platform: watchdog.h): it is
// overdue, its allowance gone without a report back, and either the child's whole tree is blocked
// (launch/tree_activity.h) through a whole stall window, or a process of it has been stuck (it
// can never go on: stuck_processes.h) that long. One busy worker beside a step that is only slow
// is enough for the step not to be called hung; a stuck process beside it is not. A truly stuck
// step is thus called at its allowance (1.5 s by default) when the tree went still at once, or
// one stall window after it went still.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "harness/supervise/channel_reader.h"
#include "harness/supervise/supervisor.h"
#include "launch/tree_activity.h"

namespace fc::harness {

class StepWatch {
 public:
  // The first hung step of `channel`, if any. Steps whose process is gone are dropped: whatever
  // happened to it is not a hang of that step.
  // `stuck`: a process of the tree has been stuck for a stall window.
  static std::optional<StepHang> check(ChannelReader& channel, const launch::TreeActivity& activity,
                                       bool stuck, Clock::time_point now);

  // When a step's allowance next runs out (the tree is looked at every kLookEvery anyway);
  // `latest` when no step is open.
  static Clock::time_point next_due(const ChannelReader& channel, Clock::time_point latest);

  // Parked: it has announced steps and its whole tree has been quiet for kParkAfter. The
  // supervisor does not count such a child against --jobs (it is waiting, likely for its
  // watchdog), so an expected hang does not hold up working variants.
  static constexpr std::chrono::milliseconds kParkAfter{500};
  static bool parked(const ChannelReader& channel, const launch::TreeActivity& activity);
};

}  // namespace fc::harness
