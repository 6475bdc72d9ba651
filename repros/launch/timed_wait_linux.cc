#include "launch/timed_wait_linux.h"

#include <sys/uio.h>

#include <cstdint>
#include <ctime>

#include "launch/syscalls_linux.h"

namespace fc::launch {
namespace {

using namespace sys;

// Two 64-bit words of the process's memory at `address` (a timespec or a timeval): needs what
// reading /proc/PID/syscall needed already (ptrace access).
bool read_pair(ProcessId pid, std::uint64_t address, std::int64_t (&out)[2]) {
  iovec local{out, sizeof out};
  iovec remote{reinterpret_cast<void*>(address), sizeof out};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof out);
}

double now_on(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A timespec at `address`: relative (its length), or absolute on `clock` (what is left of it).
void timespec_at(ProcessId pid, std::uint64_t address, bool absolute, clockid_t clock,
                 ThreadWait& w) {
  std::int64_t ts[2];
  if (!read_pair(pid, address, ts) || ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000) return;
  const double t = static_cast<double>(ts[0]) + static_cast<double>(ts[1]) / 1e9;
  w.ends_in_s = absolute ? (t > now_on(clock) ? t - now_on(clock) : 0.0) : t;
  w.ends_in_exact = absolute;
}

// A timeout in milliseconds passed in a register as an int: negative waits for ever.
bool millis(std::uint64_t reg, ThreadWait& w) {
  const auto ms = static_cast<std::int32_t>(static_cast<std::uint32_t>(reg));
  if (ms < 0) return false;
  w.ends_in_s = ms / 1000.0;
  return true;
}

}  // namespace

void read_timed_wait(ProcessId pid, long nr, const std::uint64_t (&arg)[6],
                     const std::string& wchan, ThreadWait& w) {
  // The timespecs and timevals read below are two 64-bit words: 64-bit Linux only.
  if (nr < 0 || sizeof(long) != 8) return;
  if (nr == kNanosleep) {
    w.timed = true;
    timespec_at(pid, arg[0], false, CLOCK_MONOTONIC, w);
  } else if (nr == kClockNanosleep) {
    // clock_nanosleep(clock, flags, request, remain): TIMER_ABSTIME (1) makes it absolute.
    w.timed = true;
    const auto clock = static_cast<clockid_t>(arg[0]);
    if (clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME || clock == CLOCK_BOOTTIME)
      timespec_at(pid, arg[2], (arg[1] & 1) != 0, clock, w);
  } else if (nr == kFutex) {
    // futex(word, op, value, timeout, ...): FUTEX_WAIT's timeout is relative; the other waits'
    // absolute, on CLOCK_REALTIME for LOCK_PI and with FUTEX_CLOCK_REALTIME, else monotonic.
    if (!futex_waits(arg[1]) || arg[3] == 0) return;
    w.timed = true;
    const std::uint64_t command = futex_command(arg[1]);
    const bool realtime = command == FUTEX_LOCK_PI || (arg[1] & FUTEX_CLOCK_REALTIME) != 0;
    timespec_at(pid, arg[3], command != FUTEX_WAIT, realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, w);
  } else if (nr == kPoll || (nr == kRestart && wchan.find("poll") != std::string::npos)) {
    // A poll resumed after a stop is restart_syscall, timed or not (fs/select.c,
    // do_restart_poll): the argument registers are still poll's own, its timeout the third.
    w.timed = millis(arg[2], w);
  } else if (nr == kEpollWait || nr == kEpollPwait) {
    w.timed = millis(arg[3], w);
  } else if (nr == kPpoll || nr == kSigtimedwait || nr == kSemtimedop) {
    // ppoll(fds, n, timeout, ...), rt_sigtimedwait(set, info, timeout, ...),
    // semtimedop(id, ops, n, timeout): a relative timespec, NULL for ever.
    const std::uint64_t ts = arg[nr == kSemtimedop ? 3 : 2];
    if (ts == 0) return;
    w.timed = true;
    timespec_at(pid, ts, false, CLOCK_MONOTONIC, w);
  } else if (nr == kPselect6 || nr == kEpollPwait2) {
    const std::uint64_t ts = arg[nr == kPselect6 ? 4 : 3];
    if (ts == 0) return;
    w.timed = true;
    timespec_at(pid, ts, false, CLOCK_MONOTONIC, w);
  } else if (nr == kSelect) {
    // select(n, read, write, except, timeval): Python before 3.11 sleeps so.
    if (arg[4] == 0) return;
    w.timed = true;
    std::int64_t tv[2];
    if (read_pair(pid, arg[4], tv) && tv[0] >= 0 && tv[1] >= 0 && tv[1] < 1000000)
      w.ends_in_s = static_cast<double>(tv[0]) + static_cast<double>(tv[1]) / 1e6;
  } else if (nr == kFutexWaitv) {
    // futex_waitv(waiters, n, flags, timeout, clock): absolute, NULL for ever.
    if (arg[3] == 0) return;
    w.timed = true;
    timespec_at(pid, arg[3], true, static_cast<clockid_t>(arg[4]), w);
  } else if (nr == kRestart) {
    // The other waits resumed so have a timeout: nanosleep, clock_nanosleep, a futex wait with
    // one (an untimed futex wait is restarted as itself). How long is not shown.
    w.timed = true;
  }
}

}  // namespace fc::launch
