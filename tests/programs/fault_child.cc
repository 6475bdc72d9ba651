// A child that misbehaves on request, for the supervisor's tests: faults are tested by causing
// them. Usage: fault_child MODE [ARG]
//   exit N          exit with status N (after a line on stderr)
//   segv | abort    die by SIGSEGV / SIGABRT
//   sleep S         sleep S seconds, then exit 0
//   hang            block forever
//   ignore-term     ignore SIGTERM, then block forever
//   stop            stop itself with SIGSTOP
//   flood MIB       write MIB MiB to stdout and to stderr, then exit 0
//   step-hang       announce a step on the channel (0.3 s allowance) and block inside it
//   step-busy S     announce a step (0.3 s allowance), compute for S seconds, report it done
//   result OUTCOME  send a result with OUTCOME on the channel, exit 0
//   deadlock        two threads take two mutexes in opposite orders and block for good
//   orphan          leave a grandchild (in its own session) holding stdout, then exit 0; the
//                   grandchild's pid is printed on stdout
//   grandchild      leave a grandchild (same process group) holding the output pipes, exit 0
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  std::string mode = argv[1];
  const char* arg = argc > 2 ? argv[2] : "0";
  if (mode == "exit") {
    std::fprintf(stderr, "fault_child: exiting with status %s\n", arg);
    return std::atoi(arg);
  }
  if (mode == "segv") ::raise(SIGSEGV);
  if (mode == "abort") std::abort();
  if (mode == "sleep") {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(arg)));
    return 0;
  }
  if (mode == "hang") block_forever();
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
