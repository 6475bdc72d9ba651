// Pools of workers (repros/core/pool.cc), under each start method: which worker died, how, and
// when, told apart even while an earlier worker still runs. main() is ours: launch::init() first
// (spawned workers run there), then the forkserver while the process still has one thread.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/pool.h"
#include "launch/launch.h"

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
  const double t_crash = crashed["ended_after_s"], t_exit = exited["ended_after_s"];
  const double t_slow = slow["ended_after_s"], t_quick = quick["ended_after_s"];
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
