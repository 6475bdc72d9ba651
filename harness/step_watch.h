// When an announced step is hung (the watchdog's rule, on every platform): it is overdue, its
// allowance gone without a report, and its process is idle. Idle means its CPU time has not
// moved since the step began; or, when it has, for half a second since it last moved, so a slow
// step that is still working is never called hung. A truly stuck step is thus called at its
// allowance (1.5 s by default), a step that worked then stopped half a second after that.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "harness/channel_reader.h"
#include "harness/supervisor.h"

namespace fc::harness {

class StepWatch {
 public:
  static constexpr std::chrono::duration<double> kStillWindow{0.5};

  // Looks at every open step of `channel`; the first hung one, if any. Steps whose process is
  // gone are dropped: whatever happened to it is not a hang of that step.
  std::optional<StepHang> check(ChannelReader& channel, Clock::time_point now);

  // When check() needs to look again, at the latest: at the allowance, and at the moment a step
  // would have been still for the window (so that parked() learns of it).
  Clock::time_point next_due(const ChannelReader& channel, Clock::time_point now,
                             Clock::time_point latest) const;

  // Whether the child is parked: a step it announced has been still (its process used no CPU)
  // for the still window, as of the last check(). A parked child waits, hung or not, and does
  // not need a CPU: the scheduler does not count it against --jobs.
  bool parked() const;

 private:
  struct Seen {
    std::uint64_t ticks = 0;
    Clock::time_point since;  // when the CPU time was last seen to move (or the step began)
  };
  std::map<std::pair<int, std::string>, Seen> seen_;
  Clock::time_point last_check_;
};

// Whether another job may start: `busy` running jobs hold a slot each (parked and ending ones
// do not), and no more than twice `jobs` run at once in all.
inline bool may_start(size_t busy, size_t running, size_t jobs) {
  return busy < jobs && running < 2 * jobs;
}

}  // namespace fc::harness
