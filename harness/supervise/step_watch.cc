#include "harness/supervise/step_watch.h"

#include <algorithm>

#include "harness/platform/process_info.h"

namespace fc::harness {
namespace {

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// A first look later than this after the announcement cannot vouch for the time before it.
constexpr std::chrono::milliseconds kPromptLook{100};

}  // namespace

std::optional<StepHang> StepWatch::check(ChannelReader& channel, Clock::time_point now) {
  last_check_ = now;
  auto& steps = channel.open_steps();
  for (auto it = steps.begin(); it != steps.end();) {
    const OpenStep& s = it->second;
    auto ticks = cpu_ticks(s.pid);
    if (!ticks) {
      seen_.erase(it->first);
      it = steps.erase(it);
      continue;
    }
    auto found = seen_.find(it->first);
    if (found == seen_.end()) {
      // First look, normally as the announcement arrives: the CPU time at the step's start.
      seen_.emplace(it->first, Seen{*ticks, now - s.begun <= kPromptLook ? s.begun : now});
      ++it;
      continue;
    }
    Seen& seen = found->second;
    if (*ticks != seen.ticks) {
      seen.ticks = *ticks;
      seen.since = now;
    } else if (now >= s.begun + seconds(s.within_s) && now - seen.since >= kStillWindow) {
      return StepHang{s.pid, s.step, s.within_s,
                      std::chrono::duration<double>(now - s.begun).count()};
    }
    ++it;
  }
  // Steps that reported back are no longer watched.
  for (auto it = seen_.begin(); it != seen_.end();)
    it = steps.count(it->first) ? std::next(it) : seen_.erase(it);
  return std::nullopt;
}

Clock::time_point StepWatch::next_due(const ChannelReader& channel, Clock::time_point now,
                                      Clock::time_point latest) const {
  const auto still = std::chrono::duration_cast<Clock::duration>(kStillWindow);
  Clock::time_point t = latest;
  for (const auto& [key, s] : channel.open_steps()) {
    auto due = s.begun + seconds(s.within_s);
    if (auto it = seen_.find(key); it != seen_.end()) {
      const auto still_at = it->second.since + still;
      due = std::max(due, still_at);
      if (still_at > now) due = std::min(due, still_at);
    }
    t = std::min(t, due);
  }
  if (!channel.open_steps().empty() && !tree_.still(now))
    t = std::min(t, tree_.seen() ? tree_.next_look() : now);
  return t;
}

bool StepWatch::idle_in_steps(const ChannelReader& channel, Clock::time_point now,
                              const std::function<std::optional<std::uint64_t>()>& tree_cpu) {
  if (channel.open_steps().empty()) {
    tree_ = TreeStillness{};  // looked at afresh for the next step
    return false;
  }
  if (tree_.look_due(now)) {
    const auto total = tree_cpu();
    if (!total) return false;
    tree_.feed(*total, now);
  }
  return parked(channel) && tree_.still(now);
}

bool StepWatch::parked(const ChannelReader& channel) const {
  // As of the last look, not now: stillness between two looks has not been seen.
  const auto& steps = channel.open_steps();
  if (steps.empty()) return false;
  for (const auto& kv : steps) {
    auto it = seen_.find(kv.first);
    if (it == seen_.end() || last_check_ - it->second.since < kStillWindow) return false;
  }
  return true;
}

}  // namespace fc::harness
