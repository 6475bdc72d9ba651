// Pools of workers (repros/core/pool.cc), under each start method: which worker died, how, and
// when, told apart even while an earlier worker still runs; and what a worker still running at
// the pool's deadline was doing (its whole tree blocked: hang; working: timeout), found without
// the parent polling. main() is ours: launch::init() first (spawned workers run there), then the
// forkserver while the process still has one thread.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>
#include "core/pool.h"
#include "own_cpu.h"

namespace fc {
// Outcomes by name in failure messages, not as bytes.
void PrintTo(Outcome o, std::ostream* os) { *os << to_string(o); }
}  // namespace fc

namespace {

using nlohmann::json;

void sleep_ms(const json& payload) {
  std::this_thread::sleep_for(std::chrono::milliseconds(payload.value("ms", 0)));
}

FORKCHECK_WORKER(pool_sleep_then_ok) {
  sleep_ms(payload);
  return {{"pid", ::getpid()}, {"ppid", ::getppid()}};
}

FORKCHECK_WORKER(pool_crash_after) {
  sleep_ms(payload);
  // No core file in the test's directory, whatever `ulimit -c` says: core_dumped is then false.
  const struct rlimit none = {0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
  ::raise(SIGSEGV);
  return nullptr;
}

FORKCHECK_WORKER(pool_exit_after) {
  sleep_ms(payload);
  std::fflush(nullptr);
  ::_exit(payload.value("code", 3));
}

// Computes until it is ended: still working at any deadline.
FORKCHECK_WORKER(pool_compute_forever) {
  volatile std::uint64_t x = 0;
  for (;;) x = x + 1;
}

// Waits forever using no CPU (SIGTERM ends it): blocked.
FORKCHECK_WORKER(pool_block_forever) {
  for (;;) ::pause();
}

// Waits on a child of its own that computes: the worker itself uses no CPU, its tree does.
FORKCHECK_WORKER(pool_wait_on_computing_child) {
  const pid_t worker = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    // Computes until the worker is gone (its parent changes), so nothing outlives the test.
    for (std::uint64_t i = 0;; ++i)
      if ((i & 0xFFFFF) == 0 && ::getppid() != worker) ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return nullptr;
}

fc::VariantSpec variant_for(const std::string& method) {
  fc::VariantSpec v;
  v.name = "pool-test-" + method;
  v.start_method = method;
  return v;
}

class PoolEnds : public ::testing::TestWithParam<std::string> {};

// Worker 0 runs longest; worker 1 crashes early, worker 2 exits 3 a little later, worker 3
// finishes at once. Joining in start order would see every end only after worker 0's, and would
// put them all about 2 s after the pool started.
TEST_P(PoolEnds, EachFailedWorkerIsNamedWithHowAndWhenItEnded) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_sleep_then_ok", {{{"ms", 2000}}});
  {
    fc::launch::Launcher launcher(fc::start_method_of(variant_for(method)));
    workers.push_back(launcher.start("pool_crash_after", {{"ms", 150}}));
    workers.push_back(launcher.start("pool_exit_after", {{"ms", 600}, {"code", 3}}));
    workers.push_back(launcher.start("pool_sleep_then_ok", {{"ms", 0}}));
  }
  const auto pool = fc::join_pool(workers, std::chrono::seconds(30));
  ASSERT_EQ(pool.workers.size(), 4u);
  const json& slow = pool.workers[0];
  const json& crashed = pool.workers[1];
  const json& exited = pool.workers[2];
  const json& quick = pool.workers[3];
  for (size_t i = 0; i < 4; ++i) {
    const json& w = pool.workers[i];
    EXPECT_EQ(w["index"], i);
    EXPECT_EQ(w["pid"], workers[i].pid());
    EXPECT_EQ(w["start_method"], method);
    EXPECT_TRUE(w["ended_after_s"].is_number()) << w;
  }

  EXPECT_EQ(crashed["status"], "crash");
  EXPECT_EQ(crashed["signal"], SIGSEGV);
  EXPECT_EQ(crashed["signal_name"], "SIGSEGV");
  EXPECT_EQ(crashed["core_dumped"], false);
  EXPECT_NE(crashed["error"].get<std::string>().find("SIGSEGV"), std::string::npos) << crashed;
  EXPECT_FALSE(crashed.contains("exit_code"));

  EXPECT_EQ(exited["status"], "error");
  EXPECT_EQ(exited["exit_code"], 3);
  EXPECT_FALSE(exited.contains("signal"));
  EXPECT_NE(exited["error"].get<std::string>().find("status 3"), std::string::npos) << exited;

  EXPECT_EQ(slow["status"], "ok");
  EXPECT_EQ(quick["status"], "ok");

  // When: as they happened, not in start order.
  const double t_crash = crashed["ended_after_s"].get<double>(),
               t_exit = exited["ended_after_s"].get<double>();
  const double t_slow = slow["ended_after_s"].get<double>(),
               t_quick = quick["ended_after_s"].get<double>();
  EXPECT_GE(t_crash, 0.15);
  EXPECT_LT(t_crash, 1.5) << "seen when it died, not when worker 0 ended (" << t_slow << " s)";
  EXPECT_GE(t_exit, 0.6);
  EXPECT_LT(t_exit, 1.9) << "seen when it exited, not when worker 0 ended (" << t_slow << " s)";
  EXPECT_LT(t_crash, t_exit);
  EXPECT_LT(t_quick, t_crash);
  EXPECT_GE(t_slow, 2.0);
  EXPECT_LT(t_exit, t_slow);

  // The pool's message names the one that died: index, pid, start method, signal, when.
  EXPECT_EQ(pool.outcome, fc::Outcome::kCrash);
  for (const std::string& part :
       {std::string("worker 1 "), "pid " + std::to_string(workers[1].pid()), method,
        std::string("SIGSEGV"), std::string("after the pool started")})
    EXPECT_NE(pool.message.find(part), std::string::npos) << part << " in: " << pool.message;
}

TEST_P(PoolEnds, AnExitWithoutACrashIsAnErrorWithItsCode) {
  const std::string method = GetParam();
  // Worker 1's exit 0 without a result is a failure too: it ends well after worker 0, so the
  // pool's message names worker 0, the first to fail.
  auto workers = fc::start_pool(variant_for(method), "pool_exit_after",
                                {{{"ms", 0}, {"code", 7}}, {{"ms", 400}, {"code", 0}}});
  const auto pool = fc::join_pool(workers, std::chrono::seconds(30));
  EXPECT_EQ(pool.outcome, fc::Outcome::kError) << pool.message;
  ASSERT_EQ(pool.workers.size(), 2u);
  EXPECT_EQ(pool.workers[0]["exit_code"], 7);
  EXPECT_EQ(pool.workers[0]["status"], "error");
  EXPECT_EQ(pool.workers[0]["start_method"], method);
  EXPECT_EQ(pool.workers[1]["exit_code"], 0);
  EXPECT_NE(pool.message.find("status 7"), std::string::npos) << pool.message;
}

// A deadline short enough for a test, long enough for the stall window (1 s) to be seen whole
// after a spawned worker's start-up.
constexpr std::chrono::milliseconds kShortDeadline(2000);
constexpr std::chrono::milliseconds kGrace(1000);

using fc::own_cpu_s;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_P(PoolEnds, AWorkerComputingPastTheDeadlineIsATimeoutWithItsCpu) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_compute_forever", {json::object()});
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  EXPECT_EQ(pool.outcome, fc::Outcome::kTimeout) << pool.message;
  ASSERT_EQ(pool.workers.size(), 1u);
  const json& w = pool.workers[0];
  EXPECT_EQ(w["status"], "timeout") << w;
  ASSERT_TRUE(w.contains("tree")) << w;
  const json& tree = w["tree"];
  EXPECT_EQ(tree["state"], "working") << tree;
  EXPECT_EQ(tree["still_s"], 0.0) << tree;
  // Busy: far above 1% of a CPU, though the machine may be shared.
  EXPECT_GT(tree["cpu_s_in_window"].get<double>(), 0.1) << tree;
  EXPECT_GT(tree["window_s"].get<double>(), 0.9) << tree;
  EXPECT_EQ(tree["processes"], 1) << tree;
  EXPECT_EQ(tree["threads"], 1) << tree;
  EXPECT_TRUE(contains(w["error"].get<std::string>(), "working")) << w;
  EXPECT_TRUE(contains(pool.message, "0 blocked, 1 still working")) << pool.message;
  EXPECT_TRUE(contains(pool.message, "of CPU in the last")) << pool.message;
  std::printf(
      "[ figure   ] %s worker computing at the deadline: %.3f s of CPU in the last %.2f s\n",
      method.c_str(), tree["cpu_s_in_window"].get<double>(), tree["window_s"].get<double>());
}

TEST_P(PoolEnds, AWorkerBlockedForeverIsAHang) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_block_forever", {json::object()});
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  EXPECT_EQ(pool.outcome, fc::Outcome::kHang) << pool.message;
  ASSERT_EQ(pool.workers.size(), 1u);
  const json& w = pool.workers[0];
  EXPECT_EQ(w["status"], "hang") << w;
  ASSERT_TRUE(w.contains("tree")) << w;
  const json& tree = w["tree"];
  EXPECT_EQ(tree["state"], "blocked") << tree;
  EXPECT_GE(tree["still_s"].get<double>(), 0.9) << tree;
  EXPECT_LT(tree["cpu_s_in_window"].get<double>(), 0.01) << tree;
  EXPECT_EQ(tree["processes"], 1) << tree;
  EXPECT_TRUE(contains(w["error"].get<std::string>(), "blocked")) << w;
  EXPECT_TRUE(contains(pool.message, "1 blocked, 0 still working")) << pool.message;
}

// The worker itself waits in waitpid (no CPU); its child computes. Looking at the worker alone
// would call it blocked: its tree is working.
TEST_P(PoolEnds, AWorkerWaitingOnAComputingChildIsATimeout) {
  const std::string method = GetParam();
  auto workers =
      fc::start_pool(variant_for(method), "pool_wait_on_computing_child", {json::object()});
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  EXPECT_EQ(pool.outcome, fc::Outcome::kTimeout) << pool.message;
  ASSERT_EQ(pool.workers.size(), 1u);
  const json& w = pool.workers[0];
  EXPECT_EQ(w["status"], "timeout") << w;
  ASSERT_TRUE(w.contains("tree")) << w;
  EXPECT_EQ(w["tree"]["state"], "working") << w;
  EXPECT_EQ(w["tree"]["processes"], 2) << w;
  EXPECT_GT(w["tree"]["cpu_s_in_window"].get<double>(), 0.1) << w;
}

// One blocked, one working: the pool timed out (something was still being done), and its
// message counts both, each with its CPU.
TEST_P(PoolEnds, OneBlockedAndOneWorkingIsATimeoutNamingBoth) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_block_forever", {json::object()});
  {
    fc::launch::Launcher launcher(fc::start_method_of(variant_for(method)));
    workers.push_back(launcher.start("pool_compute_forever", json::object()));
  }
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  EXPECT_EQ(pool.outcome, fc::Outcome::kTimeout) << pool.message;
  ASSERT_EQ(pool.workers.size(), 2u);
  EXPECT_EQ(pool.workers[0]["status"], "hang") << pool.workers[0];
  EXPECT_EQ(pool.workers[1]["status"], "timeout") << pool.workers[1];
  EXPECT_TRUE(contains(pool.message, "1 blocked, 1 still working")) << pool.message;
  EXPECT_TRUE(contains(pool.message, "worker 0 ")) << pool.message;
  EXPECT_TRUE(contains(pool.message, "worker 1 ")) << pool.message;
}

// A worker that crashed is the pool's outcome even while another hangs: an end that happened
// (and may be why the other waits) says more than a deadline that passed.
TEST_P(PoolEnds, ACrashWinsOverAHangAndTheMessageNamesBoth) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_block_forever", {json::object()});
  {
    fc::launch::Launcher launcher(fc::start_method_of(variant_for(method)));
    workers.push_back(launcher.start("pool_crash_after", {{"ms", 0}}));
  }
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  EXPECT_EQ(pool.outcome, fc::Outcome::kCrash) << pool.message;
  ASSERT_EQ(pool.workers.size(), 2u);
  EXPECT_EQ(pool.workers[0]["status"], "hang") << pool.workers[0];
  EXPECT_EQ(pool.workers[1]["status"], "crash") << pool.workers[1];
  EXPECT_TRUE(contains(pool.message, "SIGSEGV")) << pool.message;
  EXPECT_TRUE(contains(pool.message, "1 blocked, 0 still working")) << pool.message;
}

// join_pool blocks until something happens or it is time to look at the trees: waiting on a
// blocked worker costs its own process next to nothing (10 ms join slices cost ~11 ms in 2 s,
// and wake it ~200 times).
TEST_P(PoolEnds, WaitingOnABlockedWorkerCostsTheParentAlmostNoCpu) {
  const std::string method = GetParam();
  auto workers = fc::start_pool(variant_for(method), "pool_block_forever", {json::object()});
  const long wakeups0 = fc::own_thread_wakeups();
  const double before = own_cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  const auto pool = fc::join_pool(workers, kShortDeadline, kGrace);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double used_ms = (own_cpu_s() - before) * 1e3;
  const long wakeups = fc::own_thread_wakeups() - wakeups0;
  std::printf(
      "[ figure   ] %s: the parent used %.2f ms of CPU and woke %ld times in join_pool's "
      "%.2f s on a blocked worker\n",
      method.c_str(), used_ms, wakeups, waited);
  RecordProperty("parent_cpu_us", static_cast<int>(used_ms * 1e3));
  EXPECT_EQ(pool.outcome, fc::Outcome::kHang) << pool.message;
  EXPECT_GE(waited, 2.0);
  // The wake count is what load leaves alone: 10 ms join slices would wake it ~200 times.
  if (wakeups0 >= 0) {
    EXPECT_LT(wakeups, 40);  // 10 measured: a look at the trees every quarter second
  }
  EXPECT_LT(used_ms, 100.0) << "a spin would use the whole wait";
}

INSTANTIATE_TEST_SUITE_P(EachStartMethod, PoolEnds,
                         ::testing::Values("fork", "spawn", "forkserver"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace

int main(int argc, char** argv) {
  fc::launch::init(argc, argv);    // a spawned worker runs here and exits
  fc::launch::start_forkserver();  // while this process has one thread
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
