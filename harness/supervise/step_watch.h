// When an announced step is hung (the watchdog's rule, on every platform): it is overdue, its
// allowance gone without a report, and its process is idle. Idle means its CPU time has not
// moved since the step began; or, when it has, for half a second since it last moved, so a slow
// step that is still working is never called hung. A truly stuck step is thus called at its
// allowance (1.5 s by default), a step that worked then stopped half a second after that.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "harness/supervise/channel_reader.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

// Whether a child's whole tree has used no CPU for the still window: its total CPU time, looked
// at every kLook at most (a scan of the process table, or the job object's accounting), has not
// moved. A parked step alone is not enough: the workers beside it may be busy.
class TreeStillness {
 public:
  static constexpr std::chrono::duration<double> kStillWindow{0.5};
  static constexpr std::chrono::milliseconds kLook{250};
  bool look_due(Clock::time_point now) const { return !seen_ || now - looked_ >= kLook; }
  void feed(std::uint64_t total, Clock::time_point now) {
    if (!seen_ || total != total_) since_ = now;
    seen_ = true;
    total_ = total;
    looked_ = now;
  }
  bool still(Clock::time_point now) const { return seen_ && now - since_ >= kStillWindow; }
  // When still() may next turn true, once looked at (for the supervisor's wake-up).
  Clock::time_point next_look() const {
    return std::max(looked_ + kLook,
                    since_ + std::chrono::duration_cast<Clock::duration>(kStillWindow));
  }
  bool seen() const { return seen_; }

 private:
  bool seen_ = false;
  std::uint64_t total_ = 0;
  Clock::time_point looked_, since_;
};

class StepWatch {
 public:
  static constexpr std::chrono::duration<double> kStillWindow = TreeStillness::kStillWindow;

  // Looks at every open step of `channel`; the first hung one, if any. Steps whose process is
  // gone are dropped: whatever happened to it is not a hang of that step.
  std::optional<StepHang> check(ChannelReader& channel, Clock::time_point now);

  // When check() or idle_in_steps() needs to look again, at the latest: at the allowance, at the
  // moment a step would have been still for the window, and when the tree is next looked at.
  Clock::time_point next_due(const ChannelReader& channel, Clock::time_point now,
                             Clock::time_point latest) const;

  // Whether the child is parked: it has announced steps and every one of them has been still
  // (its process used no CPU) for the still window, as of the last check(). The supervisor also
  // asks that the whole process group be idle before it stops counting the child against --jobs.
  bool parked(const ChannelReader& channel) const;

  // Whether the child needs no CPU now: it is parked and its whole tree's CPU time (`tree_cpu`,
  // asked at most every TreeStillness::kLook while a step is open; nullopt when unknown, which
  // counts as working) has been still for the window too. The tree is looked at from a step's
  // start, so that it can count as idle as soon as the step does, and forgotten when no step is
  // open. The supervisor does not count such a child against --jobs.
  bool idle_in_steps(const ChannelReader& channel, Clock::time_point now,
                     const std::function<std::optional<std::uint64_t>()>& tree_cpu);

 private:
  struct Seen {
    std::uint64_t ticks = 0;
    Clock::time_point since;  // when the CPU time was last seen to move (or the step began)
  };
  std::map<std::pair<int, std::string>, Seen> seen_;
  Clock::time_point last_check_;
  TreeStillness tree_;
};

// Whether another job may start: `busy` running jobs hold a slot each (parked and ending ones
// do not), and no more than twice `jobs` run at once in all.
inline bool may_start(size_t busy, size_t running, size_t jobs) {
  return busy < jobs && running < 2 * jobs;
}

}  // namespace fc::harness
