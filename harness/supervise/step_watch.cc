#include "harness/supervise/step_watch.h"

#include <algorithm>

#include "harness/supervise/clock.h"
#include "launch/process_tree.h"

namespace fc::harness {

std::optional<StepHang> StepWatch::check(ChannelReader& channel,
                                         const launch::TreeActivity& activity, bool stuck,
                                         Clock::time_point now) {
  if (!stuck && !activity.blocked_through_window()) return std::nullopt;
  auto& steps = channel.open_steps();
  for (auto it = steps.begin(); it != steps.end();) {
    auto facts = launch::process_facts(it->second.pid);
    if (!facts || facts->zombie())
      it = steps.erase(it);
    else
      ++it;
  }
  for (const auto& [key, s] : steps)
    if (now >= s.begun + seconds(s.within_s))
      return StepHang{s.pid, s.step, s.within_s,
                      std::chrono::duration<double>(now - s.begun).count()};
  return std::nullopt;
}

Clock::time_point StepWatch::next_due(const ChannelReader& channel, Clock::time_point latest) {
  Clock::time_point t = latest;
  for (const auto& [key, s] : channel.open_steps()) t = std::min(t, s.begun + seconds(s.within_s));
  return t;
}

bool StepWatch::parked(const ChannelReader& channel, const launch::TreeActivity& activity) {
  return !channel.open_steps().empty() && activity.quiet_over(kParkAfter);
}

}  // namespace fc::harness
