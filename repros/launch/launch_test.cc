// fc_launch: the three start methods behave like Python multiprocessing's, and clean up after
// themselves. main() is ours: launch::init() first (spawned workers run there), then the
// forkserver while the process still has one thread.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <forkcheck/launch.h>
#include "launch/launch_test_workers.h"
#include "own_cpu.h"

namespace fc::launch {
namespace {

using namespace std::chrono_literals;
using Status = WorkerOutcome::Status;
using nlohmann::json;

constexpr auto kLong = 30s;  // generous bound for things that should take milliseconds

std::set<pid_t> g_children_at_start;  // the forkserver

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Direct children of this process, from /proc (empty when the kernel does not expose them).
std::set<pid_t> child_pids() {
  std::set<pid_t> out;
  std::ifstream in("/proc/self/task/" + std::to_string(::getpid()) + "/children");
  pid_t p;
  while (in >> p) out.insert(p);
  return out;
}

// Parent pid of `pid`, from /proc/PID/stat (-1 when unknown).
pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');  // comm may hold spaces; the fields after ')' do not
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 1));
  std::string state;
  pid_t ppid = -1;
  fields >> state >> ppid;
  return ppid;
}

// True once `pid` ignores SIGTERM (the stubborn worker is ready), false after `limit`.
bool wait_until_ignores_sigterm(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("SigIgn:", 0) == 0) {
        const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
        if (mask & (1ULL << (SIGTERM - 1))) return true;
      }
    }
    std::this_thread::sleep_for(1ms);  // test-side polling of /proc; the library never sleeps
  }
  return false;
}

// Runs `body` in a forked child and returns its exit status, so that threads and a second
// forkserver stay out of the test process.
// With `run_atexit`, the child leaves through exit(), whose handlers stop a forkserver it started.
template <typename F>
int in_forked_child(F body, bool run_atexit = false) {
  std::fflush(nullptr);  // or the child's copy of buffered output is written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int code = body();
    if (run_atexit) std::exit(code);
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

class LaunchTest : public ::testing::TestWithParam<StartMethod> {
 protected:
  Launcher launcher() const { return Launcher(GetParam()); }
  bool is_our_child() const { return GetParam() != StartMethod::kForkserver; }

  // Joined means reaped: no zombie left behind, and the pid is gone.
  void expect_reaped(pid_t pid) const {
    if (is_our_child()) {
      errno = 0;
      EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
      EXPECT_EQ(errno, ECHILD);
    }
    EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " still exists";
  }

  void TearDown() override {
    const auto children = child_pids();
    if (!children.empty() || !g_children_at_start.empty()) {
      EXPECT_EQ(children, g_children_at_start) << "a worker outlived its test";
    }
  }
};

TEST_P(LaunchTest, WorkerSeesPayloadAndReturnsResult) {
  Worker w = launcher().start("echo", {{"n", 7}, {"s", "hi"}});
  EXPECT_EQ(w.name(), "echo");
  EXPECT_EQ(w.method(), GetParam());
  const pid_t pid = w.pid();
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, Status::kOk) << out->error;
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->result["payload"], (json{{"n", 7}, {"s", "hi"}}));
  EXPECT_EQ(out->result["pid"], pid);
  EXPECT_NE(pid, ::getpid());
  EXPECT_GT(out->seconds, 0.0);
  EXPECT_FALSE(out->forced);
  expect_reaped(pid);

  auto again = w.join(0ms);  // the same outcome, without touching the (gone) process
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->result, out->result);
  EXPECT_EQ(again->seconds, out->seconds);
}

TEST_P(LaunchTest, ParentOfWorker) {
  Worker w = launcher().start("echo", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->status, Status::kOk) << out->error;
  const pid_t ppid = out->result["ppid"].get<pid_t>();
  if (GetParam() == StartMethod::kForkserver) {
    // The server forked it, and the server is our child.
    EXPECT_NE(ppid, ::getpid());
    EXPECT_EQ(parent_of(ppid), ::getpid());
  } else {
    EXPECT_EQ(ppid, ::getpid());
  }
}

TEST_P(LaunchTest, ErrorPropagatesWithMessage) {
  Worker w = launcher().start("throws", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, Status::kError);
  EXPECT_EQ(out->error, "boom");
  EXPECT_EQ(out->exit_code, 1);
  expect_reaped(w.pid());
}

TEST_P(LaunchTest, CrashIsClassifiedWithItsSignal) {
  Worker w = launcher().start("segfault", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, Status::kCrash);
  EXPECT_EQ(out->signal, SIGSEGV);
  EXPECT_FALSE(out->core_dumped);  // the worker set RLIMIT_CORE to 0
  EXPECT_EQ(out->exit_code, -1);
  expect_reaped(w.pid());
}

TEST_P(LaunchTest, ExitWithoutResultIsAnError) {
  Worker w = launcher().start("exit3", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, Status::kError);
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_EQ(out->error, "worker exited with status 3 without a result");
  expect_reaped(w.pid());
}

TEST_P(LaunchTest, JoinTimesOutOnARunningWorkerAndDestructorKillsIt) {
  pid_t pid;
  {
    Worker w = launcher().start("stubborn", nullptr);
    pid = w.pid();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(w.join(100ms).has_value());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);
    EXPECT_FALSE(w.join(0ms).has_value());
    EXPECT_EQ(::kill(pid, 0), 0) << "still running";
  }
  expect_reaped(pid);
}

TEST_P(LaunchTest, TerminateEscalatesToSigkill) {
  Worker w = launcher().start("stubborn", nullptr);
  ASSERT_TRUE(wait_until_ignores_sigterm(w.pid(), kLong));
  const auto t0 = std::chrono::steady_clock::now();
  WorkerOutcome out = w.terminate(200ms);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 200ms);
  EXPECT_TRUE(out.forced);
  EXPECT_EQ(out.status, Status::kCrash);
  EXPECT_EQ(out.signal, SIGKILL);
  expect_reaped(w.pid());
  // Terminating again reports the same end and signals nothing.
  EXPECT_TRUE(w.terminate(200ms).forced);
}

TEST_P(LaunchTest, TerminateWithinGrace) {
  Worker w = launcher().start("sleeper", nullptr);
  WorkerOutcome out = w.terminate(kLong);
  EXPECT_FALSE(out.forced);
  EXPECT_EQ(out.status, Status::kCrash);
  EXPECT_EQ(out.signal, SIGTERM);
  expect_reaped(w.pid());
}

TEST_P(LaunchTest, BigResultArrivesWhole) {
  Worker w = launcher().start("big_result", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->status, Status::kOk) << out->error;
  ASSERT_TRUE(out->result.is_string());
  EXPECT_EQ(out->result.get_ref<const std::string&>().size(), test_workers::kBigResultBytes);
  EXPECT_TRUE(out->result.get_ref<const std::string&>() == test_workers::big_result_text());
  expect_reaped(w.pid());
}

TEST_P(LaunchTest, SeveralWorkersAtOnce) {
  std::vector<Worker> workers;
  for (int i = 0; i < 5; ++i) workers.push_back(launcher().start("echo", {{"i", i}}));
  // Join in reverse so that earlier ones finish while we wait on later ones.
  for (int i = 4; i >= 0; --i) {
    auto out = workers[static_cast<std::size_t>(i)].join(kLong);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->status, Status::kOk) << out->error;
    EXPECT_EQ(out->result["payload"]["i"], i);
    expect_reaped(workers[static_cast<std::size_t>(i)].pid());
  }
}

TEST_P(LaunchTest, BigPayloadArrivesWhole) {
  const std::string big = test_workers::big_result_text();  // larger than any pipe buffer
  Worker w = launcher().start("echo", {{"big", big}});
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->status, Status::kOk) << out->error;
  EXPECT_TRUE(out->result["payload"]["big"] == big);
}

// ASan, as each compiler says it: GCC defines __SANITIZE_ADDRESS__, clang answers __has_feature.
#if defined(__has_feature)
#define FC_CLANG_ASAN __has_feature(address_sanitizer)
#else
#define FC_CLANG_ASAN 0
#endif

TEST_P(LaunchTest, StartAndJoinFromSeveralThreads) {
  // The forkserver's control socket is shared: requests from several threads must not mix.
#if defined(__SANITIZE_ADDRESS__) || FC_CLANG_ASAN
  // GCC 12's ASan allocator registers no fork handlers: a child forked while another thread
  // holds its lock deadlocks in its first allocation (seen here; google/sanitizers#774). glibc's
  // malloc resets its locks in the child, so the plain build runs this for fork too.
  if (GetParam() == StartMethod::kFork) GTEST_SKIP() << "ASan's allocator is not fork-safe";
#endif
  constexpr int kThreads = 4, kPerThread = 3;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &ok] {
      std::vector<Worker> workers;
      for (int i = 0; i < kPerThread; ++i) {
        workers.push_back(launcher().start("echo", {{"t", t}, {"i", i}}));
      }
      for (int i = 0; i < kPerThread; ++i) {
        auto out = workers[static_cast<std::size_t>(i)].join(kLong);
        if (out && out->status == Status::kOk && out->result["payload"] == json{{"t", t}, {"i", i}})
          ++ok[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(ok[static_cast<std::size_t>(t)], kPerThread);
}

double own_cpu_ms() { return fc::own_cpu_s() * 1e3; }

TEST_P(LaunchTest, JoinAnyReturnsTheWorkerThatEnded) {
  Worker sleeper = launcher().start("sleeper", nullptr);
  Worker quick = launcher().start("echo", 5);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(join_any({&sleeper, &quick}, kLong), std::vector<std::size_t>{1});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "seen when it ended, not at the timeout";
  auto out = quick.join(0ms);
  ASSERT_TRUE(out.has_value()) << "join_any said it ended: its outcome is there at once";
  EXPECT_EQ(out->status, Status::kOk) << out->error;
  EXPECT_EQ(out->result["payload"], 5);
  expect_reaped(quick.pid());

  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(join_any({&sleeper}, 100ms).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - t1, 100ms);
  EXPECT_EQ(::kill(sleeper.pid(), 0), 0) << "still running";
  EXPECT_EQ(sleeper.terminate(kLong).signal, SIGTERM);
}

TEST_P(LaunchTest, JoinAnyCountsAWorkerThatEndedBeforeAtOnce) {
  Worker w = launcher().start("echo", nullptr);
  ASSERT_TRUE(w.join(kLong).has_value());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(join_any({&w}, kLong), std::vector<std::size_t>{0});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(join_any({}, kLong).empty()) << "nothing to wait for: at once";
  Worker moved = std::move(w);
  // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from worker is what is tested
  EXPECT_THROW(join_any({&w}, 0ms), std::logic_error);
  EXPECT_THROW(join_any({nullptr}, 0ms), std::logic_error);
}

// Three results, each larger than a pipe's buffer: each worker can end only once its pipe is
// read, so joining any of them means draining all of them while waiting.
TEST_P(LaunchTest, JoinAnyDrainsEveryWorkersResult) {
  std::vector<Worker> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(launcher().start("big_result", nullptr));
  Worker sleeper = launcher().start("sleeper", nullptr);
  std::vector<Worker*> waiting = {&sleeper};
  for (auto& w : workers) waiting.push_back(&w);
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (waiting.size() > 1 && std::chrono::steady_clock::now() < until) {
    const auto ended = join_any(waiting, 5s);
    ASSERT_FALSE(ended.empty()) << "no worker ended within 5 s: its result was not drained";
    for (auto k = ended.rbegin(); k != ended.rend(); ++k) {
      ASSERT_NE(*k, 0u) << "the sleeper does not end";
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(*k));
    }
  }
  for (auto& w : workers) {
    auto out = w.join(0ms);
    ASSERT_TRUE(out.has_value());
    ASSERT_EQ(out->status, Status::kOk) << out->error;
    EXPECT_TRUE(out->result.get_ref<const std::string&>() == test_workers::big_result_text());
  }
  sleeper.terminate(kLong);
}

// One wait that sleeps until something happens: no slices to wake up for.
TEST_P(LaunchTest, JoinAnyWaitsWithoutSpendingCpu) {
  Worker a = launcher().start("sleeper", nullptr);
  Worker b = launcher().start("sleeper", nullptr);
  // Bounded by how often the waiting thread woke, which load does not change: poll() on the
  // pidfds wakes it once or twice; the 50 ms waitpid slices (no pidfd) would wake it ~25 times
  // and a 1 ms poller a thousand. The CPU figure is printed, and bounded only against a spin.
  const long wakeups0 = fc::own_thread_wakeups();
  const double before = own_cpu_ms();
  EXPECT_TRUE(join_any({&a, &b}, 1000ms).empty());
  const double used = own_cpu_ms() - before;
  const long wakeups = fc::own_thread_wakeups() - wakeups0;
  std::printf(
      "[ figure   ] join_any on 2 sleeping %s workers for 1 s: %.3f ms of CPU, %ld wakeups\n",
      to_string(GetParam()), used, wakeups);
  if (wakeups0 >= 0) {
    EXPECT_LE(wakeups, 5);
  }
  EXPECT_LT(used, 100.0) << "a spin would use the whole second";
  a.terminate(kLong);
  b.terminate(kLong);
}

TEST_P(LaunchTest, GlobalsSetInMainAreSeenOnlyByFork) {
  // main() set it after init() and after the forkserver started.
  ASSERT_EQ(test_workers::g_set_in_main, 42);
  Worker w = launcher().start("read_global", nullptr);
  auto out = w.join(kLong);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->status, Status::kOk) << out->error;
  EXPECT_EQ(out->result, GetParam() == StartMethod::kFork ? 42 : 0);
}

TEST_P(LaunchTest, UnknownWorkerThrowsInvalidArgument) {
  EXPECT_THROW(launcher().start("no-such-worker", nullptr), std::invalid_argument);
  EXPECT_EQ(child_pids(), g_children_at_start) << "nothing was started";
}

TEST_P(LaunchTest, PayloadThatCannotTravel) {
  const json payload = {{"bytes", std::string("\xff\xfe")}};  // not UTF-8: no JSON text for it
  if (GetParam() == StartMethod::kFork) {
    // fork hands over the object itself, as Python's fork hands over unpicklable arguments.
    Worker w = launcher().start("payload_size", payload);
    auto out = w.join(kLong);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->status, Status::kOk) << out->error;
    EXPECT_EQ(out->result, 1);
  } else {
    EXPECT_THROW(launcher().start("payload_size", payload), NotSerializable);
  }
}

TEST_P(LaunchTest, MovedWorkerIsStillJoinable) {
  Worker a = launcher().start("echo", 1);
  Worker b = std::move(a);
  EXPECT_EQ(a.pid(), -1);  // NOLINT(bugprone-use-after-move): a moved-from worker's pid
  auto out = b.join(kLong);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, Status::kOk) << out->error;
  EXPECT_THROW(a.join(0ms), std::logic_error);
}

TEST_P(LaunchTest, StdioIsFlushedOnceOnEachSide) {
  // In a child whose stdout is a file (fully buffered): "A" is still in the parent's buffer when
  // the worker starts, "B" in the worker's when it returns. Exactly "AB" means the parent
  // flushed before forking (no second "A" from a copied buffer) and the worker flushed at exit.
  char path[] = "/tmp/fc_launch_stdio_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const StartMethod method = GetParam();
  const int status = in_forked_child(
      [&] {
        if (::dup2(fd, STDOUT_FILENO) < 0) return 30;
        // Already running when "A" is written: start() itself must flush, not the server's fork.
        if (method == StartMethod::kForkserver) start_forkserver();
        std::printf("A");
        try {
          auto out = Launcher(method).start("print_b", nullptr).join(std::chrono::seconds(30));
          if (!out || out->status != Status::kOk) return 31;
        } catch (...) {
          return 32;
        }
        std::fflush(stdout);
        return 0;
      },
      /*run_atexit=*/true);
  ::close(fd);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(text, "AB");
}

TEST_P(LaunchTest, EnvironmentIsInherited) {
  ASSERT_EQ(::setenv("FC_LAUNCH_TEST_VAR", "set-at-runtime", 1), 0);
  Worker w = launcher().start("read_env", "FC_LAUNCH_TEST_VAR");
  auto out = w.join(kLong);
  ::unsetenv("FC_LAUNCH_TEST_VAR");
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->status, Status::kOk) << out->error;
  if (GetParam() == StartMethod::kForkserver) {
    // The server was forked at start-up: like Python's, it has the environment of that moment.
    EXPECT_TRUE(out->result.is_null());
  } else {
    EXPECT_EQ(out->result, "set-at-runtime");
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, LaunchTest,
                         ::testing::Values(StartMethod::kFork, StartMethod::kSpawn,
                                           StartMethod::kForkserver),
                         [](const ::testing::TestParamInfo<StartMethod>& param_info) {
                           return std::string(to_string(param_info.param));
                         });

TEST(Forkserver, RefusesToStartInAThreadedProcess) {
  const int status = in_forked_child([] {
    int block[2];
    if (::pipe(block) != 0) return 10;
    std::thread t([&] {
      char c;
      (void)!::read(block[0], &c, 1);  // parked until _exit
    });
    t.detach();
    if (thread_count() != 2) return 11;
    try {
      start_forkserver();
    } catch (const std::logic_error&) {
      return 0;
    }
    return 12;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Forkserver, AForkedChildStartsItsOwnServer) {
  // The inherited server belongs to the parent; the child must neither use nor keep it.
  const int status = in_forked_child(
      [] {
        try {
          Worker w = Launcher(StartMethod::kForkserver).start("echo", nullptr);
          auto out = w.join(std::chrono::seconds(30));
          if (!out || out->status != Status::kOk) return 20;
          const pid_t server = out->result["ppid"].get<pid_t>();
          return parent_of(server) == ::getpid() ? 0 : 21;
        } catch (...) {
          return 22;
        }
      },
      /*run_atexit=*/true);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Launch, NamesRoundTrip) {
  for (StartMethod m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
    EXPECT_EQ(parse_start_method(to_string(m)), m);
  }
  EXPECT_FALSE(parse_start_method("vfork").has_value());
  EXPECT_STREQ(to_string(Status::kCrash), "crash");
  EXPECT_EQ(find_worker("no-such-worker"), nullptr);
  EXPECT_NE(find_worker("echo"), nullptr);
}

TEST(Launch, ThreadCountSeesThreads) { EXPECT_EQ(thread_count(), 1); }

// FORKCHECK_START_METHOD (forkcheck exec --start-method, forkcheck matrix) is get_context()'s
// default; the program's own choice stands unless FORKCHECK_FORCE_START_METHOD=1.
class StartMethodVariables : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("FORKCHECK_START_METHOD");
    ::unsetenv("FORKCHECK_FORCE_START_METHOD");
  }
};

TEST_F(StartMethodVariables, WithoutThemTheDefaultIsPython314s) {
  ::unsetenv("FORKCHECK_START_METHOD");
#if defined(__linux__)
  EXPECT_EQ(Launcher().method(), StartMethod::kForkserver);
#else
  EXPECT_EQ(Launcher().method(), StartMethod::kSpawn);
#endif
}

TEST_F(StartMethodVariables, TheDefaultFollowsTheVariableAndTheProgramsChoiceStands) {
  ::setenv("FORKCHECK_START_METHOD", "spawn", 1);
  EXPECT_EQ(Launcher().method(), StartMethod::kSpawn);
  EXPECT_EQ(Launcher(StartMethod::kFork).method(), StartMethod::kFork);
  // And a worker started by the default is a spawned one: a fresh process.
  Worker w = Launcher().start("read_global", nlohmann::json::object());
  const auto outcome = w.join(std::chrono::seconds(60));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->result, 0) << "spawn does not run main()'s set-up";
}

TEST_F(StartMethodVariables, ForcedItOverridesTheProgramsChoice) {
  ::setenv("FORKCHECK_START_METHOD", "spawn", 1);
  ::setenv("FORKCHECK_FORCE_START_METHOD", "1", 1);
  EXPECT_EQ(Launcher(StartMethod::kFork).method(), StartMethod::kSpawn);
  ::setenv("FORKCHECK_FORCE_START_METHOD", "0", 1);
  EXPECT_EQ(Launcher(StartMethod::kFork).method(), StartMethod::kFork);
}

TEST_F(StartMethodVariables, AValueThatNamesNoMethodIsRefused) {
  ::setenv("FORKCHECK_START_METHOD", "vfork", 1);
  EXPECT_THROW(Launcher(), std::invalid_argument);
}

}  // namespace
}  // namespace fc::launch

int main(int argc, char** argv) {
  fc::launch::init(argc, argv);  // a spawned worker runs here and never returns
  fc::launch::start_forkserver();
  fc::launch::test_workers::g_set_in_main = 42;
  fc::launch::g_children_at_start = fc::launch::child_pids();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
