#include "launch/tree_activity.h"

#include <algorithm>

namespace fc::launch {

void TreeActivity::start(Clock::time_point at) {
  started_ = true;
  first_ = last_ = at;
  looks_ = 1;
}

void TreeActivity::output(Clock::time_point at) {
  if (!pending_output_ || at < *pending_output_) pending_output_ = at;
}

void TreeActivity::look(Clock::time_point at, std::uint64_t cpu_ns, bool membership_changed) {
  if (!started_) {
    start(at);
    return;
  }
  if (at < last_) at = last_;
  Look l{last_, at, cpu_ns, membership_changed || pending_output_.has_value()};
  pending_output_.reset();
  last_ = at;
  ++looks_;
  cpu_total_ += cpu_ns;
  looks_in_window_.push_back(l);
  // Keep what the widest question (the stall window) needs, and one look more.
  while (looks_in_window_.size() > 1 && looks_in_window_[1].from <= at - kStallWindow)
    looks_in_window_.pop_front();

  if (blocked()) {
    if (!still_since_) still_since_ = last_ - window();
    longest_still_ = std::max(longest_still_, last_ - *still_since_);
  } else {
    still_since_.reset();
  }
}

TreeActivity::Clock::duration TreeActivity::covered(Clock::duration span, std::uint64_t& cpu,
                                      bool& eventful) const {
  cpu = 0;
  eventful = false;
  Clock::time_point from = last_;
  for (auto it = looks_in_window_.rbegin(); it != looks_in_window_.rend(); ++it) {
    if (it->at <= last_ - span) break;  // wholly before the span
    cpu += it->cpu_ns;
    eventful = eventful || it->eventful;
    from = it->from;
  }
  return last_ - from;
}

TreeActivity::Clock::duration TreeActivity::judged(Clock::duration span) const {
  const Clock::duration half = (last_ - first_) / 2;
  return std::min(span, std::max<Clock::duration>(half, kLookEvery));
}

bool TreeActivity::quiet_over(Clock::duration span, bool whole_span) const {
  if (!started_ || looks_ < 2) return false;  // not one interval seen yet
  std::uint64_t cpu = 0;
  bool eventful = false;
  const Clock::duration want = whole_span ? span : judged(span);
  const Clock::duration seen = covered(want, cpu, eventful);
  const bool whole = seen >= want || (!whole_span && last_ - seen <= first_);
  const double allowed_ns = kIdleShare * std::chrono::duration<double, std::nano>(seen).count();
  return whole && !eventful && static_cast<double>(cpu) < allowed_ns;
}

TreeActivity::Clock::duration TreeActivity::still_for() const {
  return still_since_ ? last_ - *still_since_ : Clock::duration::zero();
}

std::uint64_t TreeActivity::cpu_in_window_ns() const {
  std::uint64_t cpu = 0;
  bool eventful = false;
  covered(judged(kStallWindow), cpu, eventful);
  return cpu;
}

TreeActivity::Clock::duration TreeActivity::window() const {
  std::uint64_t cpu = 0;
  bool eventful = false;
  return covered(judged(kStallWindow), cpu, eventful);
}

}  // namespace fc::launch
