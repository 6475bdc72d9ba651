// What a job of the run loop (run_loop.h) is on every OS, and what is done with it the same way
// everywhere: its result begun, its output taken, its watching started, its exit noted, the
// signals forkcheck sent to look at it recorded, its end written into its result. The OS parts
// (supervisor_posix.cc, supervisor_win32.cc) derive their Job from it and add what they hold:
// pipes, handles, the tree.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "harness/supervise/channel_reader.h"
#include "harness/supervise/clock.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/watchdog.h"

namespace fc::harness {

struct JobCore {
  size_t index = 0;  // of the spec in Supervisor::run's list
  const LaunchSpec* spec = nullptr;
  std::string token;  // FORKCHECK_RUN of this job's tree: finds its processes wherever they went
  ChildResult r;
  Clock::time_point start;
  Clock::time_point next_tick;                // when its watchdog wants to be asked again
  std::optional<Clock::time_point> ended_at;  // the child itself ended
  std::unique_ptr<ChannelReader> channel;
  std::unique_ptr<Watchdog> watchdog;

  // A job of `spec`: its captures' caps and its deadline in its result.
  JobCore(size_t index, const LaunchSpec& spec);
  JobCore(const JobCore&) = delete;
  JobCore& operator=(const JobCore&) = delete;
  virtual ~JobCore() = default;

  // Refused before anything starts: why, in the result (r.started stays false).
  void refuse(const std::string& why) { r.start_error = why; }
  // "cannot start 'PROGRAM': what", the words of every start that failed.
  void cannot_start(const std::string& what);

  // Watched from `start` on: its channel's reader and its watchdog, asked at once.
  void watch(TreeControl& control);

  // Bytes the child wrote on stdout (0), stderr (1) or its channel (2): the tree is doing
  // something; the bytes to the captures, the channel's reader and LaunchSpec::on_output.
  void output(int stream, const char* bytes, size_t n, Clock::time_point now);

  // The child itself ended at `at` (its status, where there is one, is the caller's to set).
  void exited(Clock::time_point at);

  // forkcheck signalled process `pid` of the tree to look at it (`what` it did): recorded for a
  // death that follows, which is then never said to be the program's own. One act told once per
  // process and burst (an ask's many thread signals are one act); the last kLookSignalsKept only.
  void note_look_signal(int pid, const std::string& what, Clock::time_point at);
  static constexpr size_t kLookSignalsKept = 400;  // a long run with a stall a minute: its last
  static constexpr double kLookSignalBurstS = 1.0;

  // The end, once what is left of the tree is ended: its duration, what its channel said, and
  // what the watching measured, into the result.
  void record_end();
};

}  // namespace fc::harness
