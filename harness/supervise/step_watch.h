// When an announced step is hung (the watchdog's rule, on every platform): it is overdue, its
// allowance gone without a report back, and the child's whole tree is blocked (launch/
// tree_activity.h: under 1% of one CPU, nobody coming or going, no output) through a whole stall
// window. One busy worker beside a stuck step is enough for the step not to be called hung: a
// slow step that is still working never is. A truly stuck step is thus called at its allowance
// (1.5 s by default) when the tree went still at once, or one stall window after it went still.
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
  static std::optional<StepHang> check(ChannelReader& channel,
                                       const launch::TreeActivity& activity,
                                       Clock::time_point now);

  // When a step's allowance next runs out (the tree is looked at every kLookEvery anyway);
  // `latest` when no step is open.
  static Clock::time_point next_due(const ChannelReader& channel, Clock::time_point latest);

  // Parked: it has announced steps and its whole tree has been quiet for kParkAfter. The
  // supervisor does not count such a child against --jobs (it is waiting, likely for its
  // watchdog), so an expected hang does not hold up working variants.
  static constexpr std::chrono::milliseconds kParkAfter{500};
  static bool parked(const ChannelReader& channel, const launch::TreeActivity& activity);
};

// Whether another job may start: `busy` running jobs hold a slot each (parked and ending ones
// do not), and no more than twice `jobs` run at once in all.
inline bool may_start(size_t busy, size_t running, size_t jobs) {
  return busy < jobs && running < 2 * jobs;
}

}  // namespace fc::harness
