// The channel from a repro process tree to the harness: JSON lines on the file descriptor named by
// FORKCHECK_CHANNEL_FD (inherited through fork, spawn and the forkserver alike). Each line is one
// write() under PIPE_BUF bytes, so lines from several processes never interleave.
//
// A process announces a hazardous step before it takes it and reports back after. The harness
// calls the step hung when no report comes back within `within_s` and the process has stopped
// making progress: a hang is recognised about a second after it starts, and slow start-up
// (loading libtorch) is never mistaken for one because it happens before the step is announced.
//
// The default allowance, 0.5 s, is shorter than the harness's stall window (1 s, through which
// the whole tree must have been blocked: launch/tree_activity.h), so a stuck step is called as
// soon as that window says the tree is blocked, not later; a working step is never called,
// however long it takes, because its tree is not blocked.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace fc::channel {

// Safe to call in the child of a multi-threaded fork: formats into a stack buffer and write()s.
constexpr double kStepAllowanceS = 0.5;
void step_begin(const char* step, double within_s = kStepAllowanceS);
void step_end(const char* step);

// The case's structured result (outcome, message, details), sent once by the case's main process.
void send_result(const nlohmann::json& result);

// Evidence gathered before a hazardous step (thread counts, worker pids), merged into the
// variant's details by the harness: kept even when the step hangs and no result ever comes.
void send_details(const nlohmann::json& details);

// True when a harness is listening; without one, results go to stdout for a person to read.
bool connected();

namespace detail {
// One step line, JSON-escaped, into `out` (at most `cap` bytes, newline included): `within_s` < 0
// for "step_done" (no allowance; inf is capped at 1e9 s, nan is 0). The escaped name is cut at 256
// bytes (or what `cap` leaves) before a UTF-8 character it would split, the same in a step's two
// lines, so each line is one valid JSON object. No allocation: see step_begin. Returns its
// length, 0 when `cap` cannot hold even the fixed part.
std::size_t format_step_line(char* out, std::size_t cap, const char* ev, int pid, const char* step,
                             double within_s, double t);
}  // namespace detail

}  // namespace fc::channel
