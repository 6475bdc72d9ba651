// A child that misbehaves on request, for the supervisor's tests: faults are tested by causing
// them. Usage: fault_child MODE [ARG]
//   exit N          exit with status N (after a line on stderr)
//   exit-message N TEXT  a few lines on stdout and stderr, TEXT the last on stderr, exit N
//   control-bytes N  on stderr: "abc", a NUL, "def", then an ESC sequence (red) and a C1 CSI
//                   (U+009B), as a child that prints raw terminal controls; exit N
//   segv | abort    die by SIGSEGV / SIGABRT
//   segfault TEXT   TEXT on stderr, then a real invalid write (SIGSEGV from the MMU, not raise)
//   sleep S         sleep S seconds, then exit 0 (a wait that ends by itself: never a hang)
//   pause-alarm S   wait in pause() with no timeout until a timer's SIGALRM, S seconds on, ends
//                   it, then exit 0: a still program that goes on by itself, which the kernel
//                   does not show as timed (an outside event: a message, a signal)
//   busy S          compute for S seconds, then exit 0
//   cpu S           compute until it has had S seconds of CPU (however long that takes), exit 0
//   stuck-child-busy  fork a child that takes a lock it already holds (one thread, waiting on a
//                   private futex with no timeout: it can never go on), and compute for good
//   vfork-stuck     vfork a child that blocks for good: the parent waits in vfork itself
//   slow-fine S     for S seconds (default 3), a worker thread alternates busy work and
//                   condition-variable (futex) waits while main waits on it; then exit 0
//   hang            block forever
//   ignore-term     ignore SIGTERM, then block forever
//   stop            stop itself with SIGSTOP
//   flood MIB       write MIB MiB to stdout and to stderr, then exit 0
//   step-hang       announce a step on the channel (0.3 s allowance) and block inside it
//   step-busy S     announce a step (0.3 s allowance), compute for S seconds, report it done
//   step-wait S     announce a step (30 s allowance), sleep S seconds in it, report it done
//   step-wait-busy-child S  as step-wait, while a child of its (same process group) computes for
//                   S seconds; reports the step done when the child has exited
//   step-hang-exit S  announce a step (0.3 s allowance), sleep S seconds in it, then exit 0
//                   without reporting it done (a hang that ends on its own)
//   result OUTCOME  send a result with OUTCOME on the channel, exit 0
//   deadlock        two threads take two mutexes in opposite orders and block for good
//   orphan          leave a grandchild (in its own session) holding stdout, then exit 0; the
//                   grandchild's pid is printed on stdout
//   grandchild      leave a grandchild (same process group) holding the output pipes, exit 0
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace {

void channel(const std::string& line) {
  const char* fd = std::getenv("FORKCHECK_CHANNEL_FD");
  if (!fd) return;
  std::string l = line + "\n";
  [[maybe_unused]] ssize_t n = ::write(std::atoi(fd), l.data(), l.size());
}

std::string step(const char* ev, double within) {
  return std::string("{\"ev\":\"") + ev + "\",\"pid\":" + std::to_string(getpid()) +
         ",\"step\":\"the test step\",\"within_s\":" + std::to_string(within) + "}";
}

[[noreturn]] void block_forever() {
  for (;;) ::pause();
}

std::mutex mutex_a, mutex_b;
std::atomic<int> holding{0};

// Each takes its first mutex, waits until the other holds its own, then asks for the other's.
__attribute__((noinline)) void lock_a_then_b() {
  std::lock_guard<std::mutex> a(mutex_a);
  ++holding;
  while (holding < 2) std::this_thread::yield();
  std::lock_guard<std::mutex> b(mutex_b);
}

__attribute__((noinline)) void lock_b_then_a() {
  std::lock_guard<std::mutex> b(mutex_b);
  ++holding;
  while (holding < 2) std::this_thread::yield();
  std::lock_guard<std::mutex> a(mutex_a);
}

// Slow but fine: rounds of ~100 ms of computing, then ~150 ms asleep in a condition variable
// (a futex wait), on a worker thread that main joins through another condition variable.
int slow_but_fine(double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  std::mutex m;
  std::condition_variable tick, done_cv;
  bool done = false;
  std::thread worker([&] {
    volatile unsigned long x = 0;
    while (Clock::now() < until) {
      const auto busy_until = Clock::now() + std::chrono::milliseconds(100);
      while (Clock::now() < busy_until) x = x + 1;
      std::unique_lock<std::mutex> lock(m);
      tick.wait_for(lock, std::chrono::milliseconds(150));  // nobody notifies: a timed futex wait
    }
    std::lock_guard<std::mutex> lock(m);
    done = true;
    done_cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    done_cv.wait(lock, [&] { return done; });
  }
  worker.join();
  std::printf("slow but fine: done after %.1f s\n", seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  std::string mode = argv[1];
  const char* arg = argc > 2 ? argv[2] : "0";
  if (mode == "exit") {
    std::fprintf(stderr, "fault_child: exiting with status %s\n", arg);
    return std::atoi(arg);
  }
  if (mode == "exit-message") {
    const char* text = argc > 3 ? argv[3] : "fault_child: failed";
    std::printf("fault_child: working\n");
    std::fflush(stdout);
    std::fprintf(stderr, "fault_child: step 1 of 2 done\nfault_child: step 2 of 2 failed\n%s\n",
                 text);
    return std::atoi(arg);
  }
  if (mode == "control-bytes") {
    static const char text[] =
        "abc\0def\n\x1b[31mred\xc2\x9b"
        "1m\n";
    if (::write(2, text, sizeof text - 1) < 0) return 1;  // by length: the NUL goes out too
    return std::atoi(arg);
  }
  if (mode == "segv") ::raise(SIGSEGV);
  if (mode == "segfault") {
    std::fprintf(stderr, "%s\n",
                 argc > 2 ? argv[2] : "fault_child: about to write through a null pointer");
    int* volatile nowhere = nullptr;  // volatile: the compiler cannot see it is null
    *nowhere = 1;
    return 1;  // not reached
  }
  if (mode == "slow-fine") return slow_but_fine(argc > 2 ? std::atof(arg) : 3.0);
  if (mode == "abort") std::abort();
  if (mode == "print-sleep-print") {  // output that comes while it runs, then more at its end
    std::printf("first\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(arg)));
    std::printf("second\n");
    return 0;
  }
  if (mode == "sleep") {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(arg)));
    return 0;
  }
  if (mode == "pause-alarm") {
    static volatile sig_atomic_t rang = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int) { rang = 1; };
    ::sigaction(SIGALRM, &sa, nullptr);
    const double s = std::atof(arg);
    itimerval t{};
    t.it_value.tv_sec = static_cast<time_t>(s);
    t.it_value.tv_usec =
        static_cast<suseconds_t>((s - static_cast<double>(t.it_value.tv_sec)) * 1e6);
    ::setitimer(ITIMER_REAL, &t, nullptr);
    while (!rang) ::pause();
    return 0;
  }
  if (mode == "hang") block_forever();
  if (mode == "busy") {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(arg));
    volatile unsigned long x = 0;
    while (std::chrono::steady_clock::now() < until) x = x + 1;
    return 0;
  }
  if (mode == "cpu") {
    const double want = std::atof(arg);
    volatile unsigned long x = 0;
    timespec cpu{};
    do {
      for (int i = 0; i < 100000; ++i) x = x + 1;
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    } while (static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9 < want);
    return 0;
  }
  if (mode == "stuck-child-busy") {
    if (::fork() == 0) {
      static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // not reentrant
      ::pthread_mutex_lock(&lock);
      ::pthread_mutex_lock(&lock);  // waits for itself
      ::_exit(0);
    }
    volatile unsigned long x = 0;
    for (;;) x = x + 1;
  }
  if (mode == "vfork-stuck") {
    if (::vfork() == 0) block_forever();
    return 0;
  }
  if (mode == "deadlock") {
    std::thread t1(lock_a_then_b), t2(lock_b_then_a);
    t1.join();
    t2.join();
    return 0;
  }
  if (mode == "ignore-term") {
    ::signal(SIGTERM, SIG_IGN);
    block_forever();
  }
  if (mode == "stop") {
    ::raise(SIGSTOP);
    block_forever();
  }
  if (mode == "flood") {
    static char buf[1 << 16];
    std::memset(buf, 'x', sizeof buf);
    long chunks = std::atol(arg) * 16;
    for (long i = 0; i < chunks; ++i) {
      if (::write(1, buf, sizeof buf) < 0 || ::write(2, buf, sizeof buf) < 0) return 1;
    }
    return 0;
  }
  if (mode == "step-hang") {
    channel(step("step", 0.3));
    block_forever();
  }
  if (mode == "step-busy") {
    channel(step("step", 0.3));
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(arg));
    volatile unsigned long x = 0;
    while (std::chrono::steady_clock::now() < until) x = x + 1;
    channel(step("step_done", 0.3));
    return 0;
  }
  if (mode == "step-wait") {
    channel(step("step", 30));
    ::usleep(static_cast<useconds_t>(std::atof(arg) * 1e6));
    channel(step("step_done", 30));
    return 0;
  }
  if (mode == "step-wait-busy-child") {
    const double secs = std::atof(arg);
    const pid_t child = ::fork();
    if (child == 0) {
      auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
      volatile unsigned long x = 0;
      while (std::chrono::steady_clock::now() < until) x = x + 1;
      ::_exit(0);
    }
    channel(step("step", 30));
    int status = 0;
    ::waitpid(child, &status, 0);
    channel(step("step_done", 30));
    return 0;
  }
  if (mode == "step-hang-exit") {
    channel(step("step", 0.3));
    ::usleep(static_cast<useconds_t>(std::atof(arg) * 1e6));
    return 0;
  }
  if (mode == "result") {
    channel(std::string("{\"ev\":\"result\",\"outcome\":\"") + arg +
            "\",\"message\":\"from fault_child\",\"details\":{\"n\":1}}");
    return 0;
  }
  if (mode == "orphan" || mode == "grandchild") {
    int ready[2];
    if (::pipe(ready) != 0) return 1;
    pid_t pid = ::fork();
    if (pid == 0) {
      if (mode == "orphan") ::setsid();  // leaves the process group the supervisor kills
      ::close(ready[0]);
      ::close(ready[1]);  // tells the parent the setsid is done
      block_forever();
    }
    ::close(ready[1]);
    char b;
    [[maybe_unused]] ssize_t n = ::read(ready[0], &b, 1);
    std::printf("%d\n", static_cast<int>(pid));
    return 0;
  }
  return 64;
}
