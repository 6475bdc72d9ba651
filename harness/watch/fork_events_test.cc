// The harness side of `forkcheck watch`, on events written by hand: pairing a child's events
// with the fork that made it, its end, and the hazard rules.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/watch/fork_events.h"
#include "harness/watch/fork_hazards.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

json fork_event(int pid, int child, uint64_t t, const std::string& img, uint64_t seq,
                json threads = json::array({{{"tid", 100}, {"name", "main"}}})) {
  return {{"ev", "fork"},
          {"pid", pid},
          {"t", t},
          {"img", img},
          {"seq", seq},
          {"tid", 100},
          {"tname", "main"},
          {"main", true},
          {"thread_list", threads},
          {"threads", threads.size()},
          {"runtimes", json::array()},
          {"cuda", {{"loaded", false}}},
          {"cmd", "prog"},
          {"child", child}};
}

json child_event(const std::string& ev, int pid, uint64_t t, const std::string& img, uint64_t seq) {
  return {{"ev", ev}, {"pid", pid}, {"t", t}, {"of_img", img}, {"of_seq", seq}};
}

TEST(WatchEvents, ChildEventsFollowTheirForkEvenWhenThePidIsReused) {
  std::vector<json> ev = {fork_event(10, 11, 100, "aa", 1), fork_event(10, 11, 500, "aa", 2)};
  json e = child_event("exec", 11, 150, "aa", 1);
  e["path"] = "/bin/true";
  ev.push_back(e);
  json end = child_event("end", 11, 600, "aa", 2);
  end["how"] = "_exit";
  end["code"] = 4;
  ev.push_back(end);
  ev.push_back({{"ev", "reaped"}, {"pid", 10}, {"t", 200}, {"child", 11}, {"code", 0}});

  json forks = pair_fork_events(ev);
  ASSERT_EQ(forks.size(), 2u);
  EXPECT_TRUE(forks[0]["exec"].get<bool>());
  EXPECT_EQ(forks[0]["exec_path"], "/bin/true");
  EXPECT_EQ(forks[0]["child_end"]["seen_by"], "parent (wait)");
  EXPECT_EQ(forks[0]["child_end"]["code"], 0);
  EXPECT_FALSE(forks[1]["exec"].get<bool>());
  // The reap at t=200 came before the second fork: it is the first child's, not this one's.
  EXPECT_EQ(forks[1]["child_end"]["seen_by"], "child");
  EXPECT_EQ(forks[1]["child_end"]["code"], 4);
}

TEST(WatchEvents, ASignalSeenByTheParentAndAnEndNobodySaw) {
  std::vector<json> ev = {
      fork_event(10, 11, 100, "aa", 1),
      fork_event(10, 12, 110, "aa", 2),
      {{"ev", "reaped"}, {"pid", 10}, {"t", 300}, {"child", 11}, {"signal", 11}, {"core", true}}};
  json forks = pair_fork_events(ev, 50);
  ASSERT_EQ(forks.size(), 2u);
  EXPECT_EQ(forks[0]["child_end"]["how"], "killed");
  EXPECT_EQ(forks[0]["child_end"]["signal_name"], "SIGSEGV");
  EXPECT_DOUBLE_EQ(forks[0]["at_s"].get<double>(), 50e-9);
  EXPECT_EQ(forks[1]["child_end"]["how"], "unknown");
}

TEST(WatchEvents, AFailedExecStillCountsAsExec) {
  std::vector<json> ev = {fork_event(10, 11, 100, "aa", 1), child_event("exec", 11, 120, "aa", 1),
                          child_event("exec_failed", 11, 130, "aa", 1)};
  ev[1]["path"] = "/nonexistent";
  ev[2]["errno"] = 2;
  json forks = pair_fork_events(ev);
  EXPECT_TRUE(forks[0]["exec"].get<bool>());
  EXPECT_EQ(forks[0]["exec_errno"], 2);
  EXPECT_TRUE(fork_hazards(forks[0]).empty());
}

json paired(json threads, json cuda = {{"loaded", false}}) {
  json f = fork_event(10, 11, 100, "aa", 1, std::move(threads));
  f["cuda"] = std::move(cuda);
  return pair_fork_events({f})[0];
}

TEST(WatchHazards, ASingleThreadedForkIsSafe) {
  EXPECT_TRUE(fork_hazards(paired(json::array({{{"tid", 100}, {"name", "main"}}}))).empty());
}

TEST(WatchHazards, AnOpenMPPoolIsNamedByItsRuntime) {
  json h =
      fork_hazards(paired(json::array({{{"tid", 100}, {"name", "main"}},
                                       {{"tid", 101}, {"name", "main"}, {"by", "libgomp.so.1"}},
                                       {{"tid", 102}, {"name", "main"}, {"by", "libgomp.so.1"}}})));
  ASSERT_EQ(h.size(), 1u) << h.dump(2);
  EXPECT_EQ(h[0]["kind"], "thread-pool");
  EXPECT_EQ(h[0]["runtime"], "libgomp");
  EXPECT_EQ(h[0]["threads"], 2);
  EXPECT_EQ(h[0]["what"], "libgomp: an OpenMP pool was active (2 worker threads alive)");
  auto advice = fork_advice(h);
  ASSERT_EQ(advice.size(), 2u);
  EXPECT_NE(advice[1].find("omp_pause_resource_all"), std::string::npos);
}

TEST(WatchHazards, OtherThreadsAreAHazardOpenBlasWorkersAreNot) {
  json f = paired(json::array({{{"tid", 100}, {"name", "main"}},
                               {{"tid", 101}, {"name", "pt_autograd_0"}, {"by", "libtorch_cpu.so"}},
                               {{"tid", 102}, {"name", "main"}, {"by", "libopenblas.so.0"}}}));
  json h = fork_hazards(f);
  ASSERT_EQ(h.size(), 1u) << h.dump(2);
  EXPECT_EQ(h[0]["kind"], "threads");
  EXPECT_EQ(h[0]["what"], "1 other thread was running: pt_autograd_0 (started by libtorch_cpu.so)");
  json forks = json::array({f});
  add_hazards(forks);
  ASSERT_TRUE(forks[0].contains("notes"));
  EXPECT_NE(forks[0]["notes"][0].get<std::string>().find("OpenBLAS"), std::string::npos);
}

TEST(WatchHazards, CudaCountsOnlyOnceInitialised) {
  json one = json::array({{{"tid", 100}, {"name", "main"}}});
  EXPECT_TRUE(fork_hazards(paired(one, {{"loaded", true}, {"initialised", false}})).empty());
  json h = fork_hazards(paired(one, {{"loaded", true}, {"initialised", true}, {"devices", 1}}));
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]["kind"], "cuda");
  EXPECT_EQ(h[0]["what"], "CUDA was initialised in the parent (1 device)");
}

TEST(WatchHazards, TotalsNameTheRuntimes) {
  json forks =
      json::array({paired(json::array({{{"tid", 100}, {"name", "main"}},
                                       {{"tid", 101}, {"name", "main"}, {"by", "libgomp.so.1"}}})),
                   paired(json::array({{{"tid", 100}, {"name", "main"}}}))});
  add_hazards(forks);
  json t = fork_totals(forks);
  EXPECT_EQ(t["forks"], 2);
  EXPECT_EQ(t["hazardous"], 1);
  EXPECT_EQ(t["runtimes"], json::array({"libgomp"}));
}

// --allow: the kinds are the ids fork_hazards writes; an allowed hazard is marked, a fork whose
// every hazard is allowed does not fail, one with a hazard of another kind still does.
TEST(WatchJudge, AllowedKindsAreMarkedAndDoNotFail) {
  EXPECT_EQ(hazard_kinds(), (std::vector<std::string>{"thread-pool", "threads", "cuda"}));
  EXPECT_TRUE(is_hazard_kind("threads"));
  EXPECT_FALSE(is_hazard_kind("libgomp"));
  const json main_thread = {{"tid", 100}, {"name", "main"}};
  const json other = {{"tid", 101}, {"name", "loader"}};
  json forks = json::array(
      {paired(json::array({main_thread, other})),  // threads
       paired(json::array({main_thread, other}),
              {{"loaded", true}, {"initialised", true}, {"devices", 1}}),  // threads + cuda
       paired(json::array({main_thread}))});                               // safe
  for (size_t i = 0; i < forks.size(); ++i) forks[i]["index"] = i + 1;
  add_hazards(forks);
  judge_forks(forks, {"threads"});
  EXPECT_TRUE(forks[0]["allowed"].get<bool>());
  EXPECT_TRUE(forks[0]["hazards"][0]["allowed"].get<bool>());
  EXPECT_FALSE(forks[1]["allowed"].get<bool>()) << forks[1].dump(2);
  EXPECT_FALSE(forks[1]["hazards"][1].value("allowed", false)) << "cuda was not allowed";
  EXPECT_FALSE(forks[2].contains("allowed"));
  // The full advice: the general fix first, then each hazard's own.
  ASSERT_EQ(forks[1]["advice"].size(), 3u) << forks[1].dump(2);
  EXPECT_NE(forks[1]["advice"][0].get<std::string>().find("spawn or forkserver"),
            std::string::npos);
  EXPECT_NE(forks[1]["advice"][2].get<std::string>().find("initialise CUDA only in the workers"),
            std::string::npos);

  const json t = fork_totals(forks);
  EXPECT_EQ(t["hazardous"], 2);
  EXPECT_EQ(t["allowed"], 1);
  EXPECT_EQ(t["failing"], 1);
  EXPECT_EQ(t["safe"], 1);

  // One finding per kind, those that fail first, each with its fix.
  const json f = hazard_findings(forks);
  ASSERT_EQ(f.size(), 2u) << f.dump(2);
  EXPECT_EQ(f[0]["kind"], "cuda");
  EXPECT_FALSE(f[0]["allowed"].get<bool>());
  EXPECT_EQ(f[0]["fork_indices"], json::array({2}));
  EXPECT_EQ(f[1]["kind"], "threads");
  EXPECT_TRUE(f[1]["allowed"].get<bool>());
  EXPECT_EQ(f[1]["forks"], 2);
  EXPECT_EQ(f[1]["fork_indices"], json::array({1, 2}));
  ASSERT_EQ(f[1]["fix"].size(), 2u);
  EXPECT_NE(f[1]["fix"][1].get<std::string>().find("join the threads"), std::string::npos);

  // Nothing allowed: both forks fail.
  judge_forks(forks, {});
  EXPECT_EQ(fork_totals(forks)["failing"], 2);
}

TEST(WatchJudge, ThreadPoolFindingsAreOnePerRuntime) {
  const json main_thread = {{"tid", 100}, {"name", "main"}};
  json forks = json::array(
      {paired(json::array({main_thread, {{"tid", 101}, {"name", "w"}, {"by", "libgomp.so.1"}}})),
       paired(json::array({main_thread, {{"tid", 101}, {"name", "w"}, {"by", "libtbb.so.12"}}}))});
  add_hazards(forks);
  judge_forks(forks, {});
  const json f = hazard_findings(forks);
  ASSERT_EQ(f.size(), 2u) << f.dump(2);
  EXPECT_EQ(f[0]["title"], "thread-pool (libgomp)");
  EXPECT_EQ(f[1]["title"], "thread-pool (TBB)");
  EXPECT_NE(f[0]["fix"].back().get<std::string>().find("omp_pause_resource_all"),
            std::string::npos);
  EXPECT_NE(f[1]["fix"].back().get<std::string>().find("tbb::finalize"), std::string::npos);
}

TEST(WatchEvents, ForksAreNumberedInOrder) {
  json forks =
      pair_fork_events({fork_event(10, 12, 200, "aa", 2), fork_event(10, 11, 100, "aa", 1)});
  ASSERT_EQ(forks.size(), 2u);
  EXPECT_EQ(forks[0]["index"], 1);
  EXPECT_EQ(forks[0]["child"], 11);
  EXPECT_EQ(forks[1]["index"], 2);
}

TEST(WatchEvents, ATornLineIsSkipped) {
  auto dir = std::filesystem::temp_directory_path() /
             ("forkcheck-watch-events-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "10.jsonl") << fork_event(10, 11, 100, "aa", 1).dump() << "\n"
                                  << "{\"ev\":\"reaped\",\"pi";
  std::ofstream(dir / "notes.txt") << "not an event file\n";
  WatchEvents ev = read_watch_events(dir);
  EXPECT_EQ(ev.files, 1u);
  EXPECT_EQ(ev.events.size(), 1u);
  EXPECT_EQ(ev.bad_lines, 1u);
  std::filesystem::remove_all(dir);
}

// The events folder is one the watched program can write to: a line whose fields have other types
// than the shim writes is skipped and counted, never a type_error out of the pairing.
TEST(WatchEvents, ALineOfTheWrongTypesIsSkipped) {
  auto dir = std::filesystem::temp_directory_path() /
             ("forkcheck-watch-types-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  json bad_thread = fork_event(10, 12, 200, "aa", 2);
  bad_thread["thread_list"] = json::array({{{"tid", "100"}}});
  json bad_cuda = fork_event(10, 13, 300, "aa", 3);
  bad_cuda["cuda"] = {{"initialised", "yes"}};
  std::ofstream(dir / "10.jsonl") << fork_event(10, 11, 100, "aa", 1).dump() << "\n"
                                  << R"({"ev":7,"pid":10})"
                                  << "\n"
                                  << R"({"ev":"fork","pid":"10","child":11})"
                                  << "\n"
                                  << R"({"ev":"reaped","pid":10,"child":11,"code":"0"})"
                                  << "\n"
                                  << bad_thread.dump() << "\n"
                                  << bad_cuda.dump() << "\n";
  WatchEvents ev = read_watch_events(dir);
  EXPECT_EQ(ev.events.size(), 1u);
  EXPECT_EQ(ev.bad_lines, 5u);
  json forks;
  EXPECT_NO_THROW(forks = pair_fork_events(ev.events));
  EXPECT_EQ(forks.size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fc::harness
