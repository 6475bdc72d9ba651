// What a sleeping thread waits in (launch/process_tree.h: thread_wait), read from real processes
// each blocked in one system call: whether the wait ends by itself, and when.
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "launch/process_tree.h"

namespace fc::launch {
namespace {

// A child process blocked in `wait` (it never returns in the test's time); what thread_wait says
// of its thread once the kernel shows it asleep in system call `nr`.
class Blocked {
 public:
  Blocked(long nr, const std::function<void()>& wait) : nr_(nr) {
    pid_ = ::fork();
    if (pid_ == 0) {
      wait();
      ::_exit(0);
    }
  }
  ~Blocked() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Blocked(const Blocked&) = delete;
  Blocked& operator=(const Blocked&) = delete;
  pid_t pid() const { return pid_; }
  // Waits (the test's own timeout is the bound) for the child to sleep in the call (or in `nr`).
  ThreadWait wait(long nr = -1) const {
    for (;;) {
      const auto facts = process_facts(pid_);
      const auto w = thread_wait(pid_, pid_);
      if (facts && facts->state == 'S' && w && w->syscall == (nr < 0 ? nr_ : nr)) return *w;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  long nr_;
  pid_t pid_ = -1;
};

timespec in(double seconds, clockid_t clock) {
  timespec now{};
  ::clock_gettime(clock, &now);
  now.tv_sec += static_cast<time_t>(seconds);
  return now;
}

long futex(std::uint32_t* word, int op, const timespec* t, std::uint32_t mask) {
  return ::syscall(SYS_futex, word, op, 0, t, nullptr, mask);
}

TEST(TimedWait, NanosleepEndsWithinWhatItAskedFor) {
  Blocked b(SYS_nanosleep, [] {
    timespec t{300, 500000000};
    ::syscall(SYS_nanosleep, &t, nullptr);
  });
  const ThreadWait w = b.wait();
  EXPECT_TRUE(w.timed);
  EXPECT_DOUBLE_EQ(w.ends_in_s, 300.5);
  EXPECT_FALSE(w.ends_in_exact) << "relative: at most";
  EXPECT_FALSE(w.untimed_private_futex);
}

TEST(TimedWait, AnAbsoluteClockNanosleepSaysExactlyWhen) {
  // Python 3.11+'s time.sleep.
  Blocked b(SYS_clock_nanosleep, [] {
    const timespec t = in(300, CLOCK_MONOTONIC);
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr);
  });
  const ThreadWait w = b.wait();
  EXPECT_TRUE(w.timed);
  EXPECT_TRUE(w.ends_in_exact);
  EXPECT_GT(w.ends_in_s, 0);
  EXPECT_LE(w.ends_in_s, 300);
}

TEST(TimedWait, AFutexWithATimeoutIsTimedAndOneWithoutIsNot) {
  // A threading wait with a timeout (FUTEX_WAIT_BITSET, absolute), a relative FUTEX_WAIT, and a
  // lock wait for ever.
  static std::uint32_t word = 0;
  Blocked bitset(SYS_futex, [] {
    const timespec t = in(300, CLOCK_MONOTONIC);
    futex(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, &t, FUTEX_BITSET_MATCH_ANY);
  });
  Blocked relative(SYS_futex, [] {
    const timespec t{200, 0};
    futex(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, &t, 0);
  });
  Blocked forever(SYS_futex, [] { futex(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, nullptr, 0); });
  const ThreadWait b = bitset.wait(), r = relative.wait(), f = forever.wait();
  EXPECT_TRUE(b.timed);
  EXPECT_TRUE(b.ends_in_exact);
  EXPECT_GT(b.ends_in_s, 0);
  EXPECT_LE(b.ends_in_s, 300);
  EXPECT_FALSE(b.untimed_private_futex);
  EXPECT_TRUE(r.timed);
  EXPECT_DOUBLE_EQ(r.ends_in_s, 200);
  EXPECT_FALSE(f.timed);
  EXPECT_EQ(f.ends_in_s, -1);
  EXPECT_TRUE(f.untimed_private_futex);
}

TEST(TimedWait, PollAndSelectAreTimedOnlyWithATimeout) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int rd = fds[0];
  Blocked timed_poll(SYS_ppoll, [rd] {
    pollfd p{rd, POLLIN, 0};
    const timespec t{120, 0};
    ::ppoll(&p, 1, &t, nullptr);
  });
  Blocked select_sleep(SYS_pselect6, [] {
    const timespec t{90, 0};  // Python before 3.11 sleeps in select() (pselect6 on aarch64)
    ::pselect(0, nullptr, nullptr, nullptr, &t, nullptr);
  });
  Blocked read_forever(SYS_read, [rd] {
    char c;
    (void)!::read(rd, &c, 1);
  });
#ifdef SYS_poll
  Blocked poll_ms(SYS_poll, [rd] {
    pollfd p{rd, POLLIN, 0};
    ::poll(&p, 1, 45000);
  });
  Blocked poll_forever(SYS_poll, [rd] {
    pollfd p{rd, POLLIN, 0};
    ::poll(&p, 1, -1);
  });
  Blocked select_tv(SYS_select, [] {
    timeval tv{70, 250000};
    ::syscall(SYS_select, 0, nullptr, nullptr, nullptr, &tv);
  });
  const ThreadWait pm = poll_ms.wait(), pf = poll_forever.wait(), st = select_tv.wait();
  EXPECT_TRUE(pm.timed);
  EXPECT_DOUBLE_EQ(pm.ends_in_s, 45);
  EXPECT_FALSE(pf.timed);
  EXPECT_TRUE(st.timed);
  EXPECT_DOUBLE_EQ(st.ends_in_s, 70.25);
#endif
  const ThreadWait tp = timed_poll.wait(), ss = select_sleep.wait(), rf = read_forever.wait();
  EXPECT_TRUE(tp.timed);
  EXPECT_DOUBLE_EQ(tp.ends_in_s, 120);
  EXPECT_TRUE(ss.timed);
  EXPECT_DOUBLE_EQ(ss.ends_in_s, 90);
  EXPECT_FALSE(rf.timed);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(TimedWait, ASleepResumedAfterAStopIsStillTimed) {
  // A stop and continue (a debugger's attach) resumes a sleep as restart_syscall, whose
  // arguments no longer say how long.
  Blocked b(SYS_nanosleep, [] {
    timespec t{300, 0};
    ::syscall(SYS_nanosleep, &t, nullptr);
  });
  b.wait();
  ::kill(b.pid(), SIGSTOP);
  while (!process_facts(b.pid()) || process_facts(b.pid())->state != 'T')
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(b.pid(), SIGCONT);
  const ThreadWait w = b.wait(SYS_restart_syscall);
  EXPECT_TRUE(w.timed);
  EXPECT_EQ(w.ends_in_s, -1) << "not shown";
}

// An untimed poll() resumed after a stop (a debugger's attach: forkcheck's own brief look) is
// restart_syscall too, and still waits for ever: a Pool's worker handler thread, whose workers
// had died, was once called asleep, and the hang a timeout.
#ifdef SYS_poll  // aarch64 has ppoll only, restarted as itself
TEST(TimedWait, APollResumedAfterAStopIsTimedOnlyIfThePollWas) {
  auto resumed = [](int timeout_ms) {
    Blocked b(SYS_poll, [timeout_ms] {
      int fds[2];
      if (::pipe(fds) != 0) return;
      pollfd p{fds[0], POLLIN, 0};
      ::poll(&p, 1, timeout_ms);
    });
    b.wait();
    ::kill(b.pid(), SIGSTOP);
    while (!process_facts(b.pid()) || process_facts(b.pid())->state != 'T')
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(b.pid(), SIGCONT);
    return b.wait(SYS_restart_syscall);
  };
  EXPECT_FALSE(resumed(-1).timed);
  const ThreadWait w = resumed(200000);
  EXPECT_TRUE(w.timed);
  EXPECT_DOUBLE_EQ(w.ends_in_s, 200) << "at most what it asked for";
}
#endif

}  // namespace
}  // namespace fc::launch
