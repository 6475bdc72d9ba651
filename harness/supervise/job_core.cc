#include "harness/supervise/job_core.h"

#include <chrono>

namespace fc::harness {

JobCore::JobCore(size_t index_in, const LaunchSpec& spec_in) : index(index_in), spec(&spec_in) {
  r.out = Capture(spec_in.capture_cap);
  r.err = Capture(spec_in.capture_cap);
  r.timeout_s = spec_in.timeout_s;
}

void JobCore::cannot_start(const std::string& what) {
  refuse("cannot start '" + (spec->argv.empty() ? std::string() : spec->argv[0]) + "': " + what);
}

void JobCore::watch(TreeControl& control) {
  channel = std::make_unique<ChannelReader>(start);
  watchdog = std::make_unique<Watchdog>(*spec, r, control, start);
  next_tick = start;
}

void JobCore::output(int stream, const char* bytes, size_t n, Clock::time_point now) {
  if (n == 0) return;
  watchdog->output(now);
  if (stream == 0)
    r.out.append(bytes, n);
  else if (stream == 1)
    r.err.append(bytes, n);
  else
    channel->feed(bytes, n, now);
  if (stream < 2 && spec->on_output) spec->on_output(stream + 1, bytes, n);
}

void JobCore::exited(Clock::time_point at) {
  ended_at = at;
  if (watchdog) watchdog->exited(at);
}

void JobCore::note_look_signal(int pid, const std::string& what, Clock::time_point at) {
  const double at_s = std::chrono::duration<double>(at - start).count();
  auto& looks = r.look_signals;
  for (auto it = looks.rbegin(); it != looks.rend() && at_s - it->at_s < kLookSignalBurstS; ++it)
    if (it->pid == pid && it->what == what) return;
  if (looks.size() >= kLookSignalsKept) looks.erase(looks.begin());
  looks.push_back({pid, what, at_s});
}

void JobCore::record_end() {
  r.duration_s = std::chrono::duration<double>(ended_at.value_or(start) - start).count();
  r.result = channel->result();
  r.early_details = channel->early_details();
  r.steps = channel->step_log();
  r.bad_channel_lines = channel->bad_lines();
  r.bad_channel_line = channel->bad_line();
  r.bad_channel_why = channel->bad_why();
  watchdog->finish(ended_at.value_or(start));
}

}  // namespace fc::harness
