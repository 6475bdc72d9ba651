// When an announced step is hung (the watchdog's rule, on every platform): it is overdue, its
// allowance gone without a report, and its process is idle. Idle means its CPU time has not
// moved since the step began; or, when it has, for half a second since it last moved, so a slow
// step that is still working is never called hung. A truly stuck step is thus called at its
// allowance (1.5 s by default), a step that worked then stopped half a second after that.
#pragma once

#include <chrono>
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

  // When check() needs to look again, at the latest.
  Clock::time_point next_due(const ChannelReader& channel, Clock::time_point latest) const;

 private:
  struct Seen {
    std::uint64_t ticks = 0;
    Clock::time_point since;  // when the CPU time was last seen to move (or the step began)
  };
  std::map<std::pair<int, std::string>, Seen> seen_;
};

}  // namespace fc::harness
