// The system calls a blocked thread is found in, as this machine numbers them (<sys/syscall.h>),
// for reading /proc/PID/task/TID/syscall (process_tree_linux.cc, timed_wait_linux.cc). A call
// this architecture does not have (aarch64: pause, poll, select, epoll_wait) is -2: no thread is
// ever found in it.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>

#include <cstdint>

namespace fc::launch::sys {

constexpr long kNone = -2;
constexpr long kFutex = SYS_futex, kNanosleep = SYS_nanosleep,
               kClockNanosleep = SYS_clock_nanosleep, kPpoll = SYS_ppoll, kPselect6 = SYS_pselect6,
               kEpollPwait = SYS_epoll_pwait, kSigtimedwait = SYS_rt_sigtimedwait,
               kSigsuspend = SYS_rt_sigsuspend, kSemtimedop = SYS_semtimedop,
               kRestart = SYS_restart_syscall;
#ifdef SYS_pause
constexpr long kPause = SYS_pause;
#else
constexpr long kPause = kNone;
#endif
#ifdef SYS_poll
constexpr long kPoll = SYS_poll, kSelect = SYS_select, kEpollWait = SYS_epoll_wait;
#else
constexpr long kPoll = kNone, kSelect = kNone, kEpollWait = kNone;
#endif
#ifdef SYS_epoll_pwait2
constexpr long kEpollPwait2 = SYS_epoll_pwait2;
#else
constexpr long kEpollPwait2 = kNone;
#endif
#ifdef SYS_futex_waitv
constexpr long kFutexWaitv = SYS_futex_waitv;
#else
constexpr long kFutexWaitv = kNone;
#endif

// futex(2)'s command, without its private and clock flags.
constexpr std::uint64_t futex_command(std::uint64_t op) { return op & FUTEX_CMD_MASK; }

// The futex commands that wait: FUTEX_WAIT (relative timeout), and LOCK_PI, WAIT_BITSET,
// WAIT_REQUEUE_PI, LOCK_PI2 (absolute). A NULL timeout waits for ever with each.
constexpr bool futex_waits(std::uint64_t op) {
  const std::uint64_t c = futex_command(op);
  return c == FUTEX_WAIT || c == FUTEX_LOCK_PI || c == FUTEX_WAIT_BITSET ||
         c == FUTEX_WAIT_REQUEUE_PI || c == 13 /* FUTEX_LOCK_PI2, Linux 5.14 */;
}

}  // namespace fc::launch::sys
