// The state a supervised child starts in, whichever way it starts: exec'd by the harness, or
// forked from a zygote (which then runs the program without an exec). Async-signal-safe, for the
// time between fork and exec. POSIX only.
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>

namespace fc::launch::detail {

// Which signals a process was started with set to SIG_IGN, indexed by signal number.
struct IgnoredSignals {
  static constexpr int kCount = 65;  // Linux has 64 signals, macOS 31
  bool ignored[kCount] = {};
  // This process's own dispositions, now (call it before installing any handler).
  static IgnoredSignals of_this_process();
};

// Every signal to SIG_DFL but those `ignored` (SIG_IGN, as exec would have kept them), and an
// empty signal mask.
void reset_signals(const IgnoredSignals& ignored);

// The soft descriptor limit set back to `soft` (0: left as it is).
void restore_descriptor_limit(std::uint64_t soft);

// Every descriptor from 3 up close-on-exec, but `keep` (-1: none). Linux 5.11+: close_range;
// else each one /proc/self/fd lists (Linux) or each one up to the descriptor limit.
void cloexec_from_3(int keep);

// Every descriptor from 3 up closed, but those in `keep` (for a forked child that will not exec).
void close_from_3(const int* keep, std::size_t n_keep);

// What a supervised child is given between fork and exec: the signal dispositions and descriptor
// limit its supervisor was started with, an empty signal mask, and no descriptor but its stdio and
// `keep` (marked close-on-exec; `keep` is left as it is).
struct ChildStart {
  IgnoredSignals ignored;
  std::uint64_t nofile = 0;     // the soft descriptor limit to set back (0: as it is)
  void apply(int keep) const {  // async-signal-safe
    reset_signals(ignored);
    restore_descriptor_limit(nofile);
    cloexec_from_3(keep);
  }
};

}  // namespace fc::launch::detail
