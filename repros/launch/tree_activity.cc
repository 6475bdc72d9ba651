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

void TreeActivity::look(Clock::time_point at, const TreeChange& change, bool held) {
  if (!started_) {
    start(at);
    return;
  }
  if (at < last_) at = last_;
  Look l{last_,
         at,
         change.cpu_ns,
         change.membership_changed || pending_output_.has_value(),
         change.wanted_cpu && !held,
         change.stopped && !held};
  pending_output_.reset();
  const Clock::time_point from = last_;
  last_ = at;
  ++looks_;
  cpu_total_ += change.cpu_ns;
  run_delay_total_ += change.run_delay_ns;
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
  const double got = static_cast<double>(change.cpu_ns);
  const double interval = std::chrono::duration<double, std::nano>(at - from).count();
  if (l.wanted && !l.eventful && got < kStarvedShare * interval) {
    if (!starved_since_) starved_since_ = from;
    longest_starved_ = std::max(longest_starved_, last_ - *starved_since_);
  } else {
    starved_since_.reset();
  }
}

void TreeActivity::restart(Clock::time_point at) {
  if (!started_) return;
  looks_in_window_.clear();
  pending_output_.reset();
  still_since_.reset();
  starved_since_.reset();
  first_ = last_ = std::max(at, last_);
}

TreeActivity::Clock::duration TreeActivity::starved_for() const {
  return starved_since_ ? last_ - *starved_since_ : Clock::duration::zero();
}

TreeActivity::Clock::duration TreeActivity::covered(Clock::duration span, std::uint64_t& cpu,
                                                    bool& eventful) const {
  cpu = 0;
  eventful = false;
  Clock::time_point from = last_;
  for (auto it = looks_in_window_.rbegin(); it != looks_in_window_.rend(); ++it) {
    if (it->at <= last_ - span) break;  // wholly before the span
    cpu += it->cpu_ns;
    eventful = eventful || it->eventful || it->wanted || it->stopped;
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
