// `forkcheck watch`, from the outside: it flags exactly the hazardous forks of the test programs
// (tests/watch/*), names the runtime behind each, and leaves the program's output and exit
// status as they are without it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Ran {
  int code = -1;
  int signal = 0;
  std::string out, err;
};

Ran run(const std::vector<std::string>& argv, double timeout_s = 240) {
  LaunchSpec spec;
  spec.argv = argv;
  spec.timeout_s = timeout_s;
  spec.channel = false;
  auto r = supervise(spec);
  return {r.exit.code, r.exit.signal, r.out.text(), r.err.text()};
}

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() /
           ("forkcheck-watch-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

// `forkcheck watch --out DIR -- command...`
Ran watch(const fs::path& out, const std::vector<std::string>& command) {
  std::vector<std::string> argv = {FC_FORKCHECK, "watch", "--out", out.string(), "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return run(argv);
}

json report(const fs::path& out) {
  std::ifstream in(out / "report.json");
  return json::parse(in);
}

// References into `rep`: keep the report in a variable of its own.
const json& variant(const json& rep) { return rep["cases"][0]["variants"][0]; }
const json& forks(const json& rep) { return variant(rep)["details"]["forks"]; }

size_t hazardous(const json& fs_) {
  size_t n = 0;
  for (const auto& f : fs_) n += f["hazards"].empty() ? 0 : 1;
  return n;
}

bool has_runtime(const json& fork, const std::string& runtime) {
  for (const auto& h : fork["hazards"])
    if (h.value("runtime", "") == runtime) return true;
  return false;
}

TEST(Watch, ThreadedForkWithoutExecIsFlaggedForkWithExecIsNot) {
  auto out = fresh_dir("threaded");
  Ran r = watch(out, {FC_WATCH_THREADED});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json rep = report(out);
  EXPECT_EQ(rep["cases"][0]["id"], "watch");
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 2u) << f.dump(2);

  EXPECT_FALSE(f[0]["exec"].get<bool>());
  ASSERT_EQ(f[0]["hazards"].size(), 1u) << f[0].dump(2);
  EXPECT_EQ(f[0]["hazards"][0]["kind"], "threads");
  EXPECT_NE(f[0]["hazards"][0]["what"].get<std::string>().find("fc_sleeper"), std::string::npos);
  EXPECT_EQ(f[0]["threads"], 2);
  EXPECT_EQ(f[0]["child_end"]["how"], "exited");
  EXPECT_EQ(f[0]["child_end"]["code"], 5);

  EXPECT_TRUE(f[1]["exec"].get<bool>());
  EXPECT_TRUE(f[1]["hazards"].empty()) << f[1].dump(2);
  EXPECT_EQ(f[1]["exec_path"], "/proc/self/exe");
  EXPECT_EQ(f[1]["child_end"]["code"], 0);

  EXPECT_EQ(variant(rep)["details"]["watch"]["totals"]["hazardous"], 1);
  // The printed summary: the hazardous fork in full, with what to do instead.
  EXPECT_NE(r.out.find("HAZARD  fork 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spawn or forkserver"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("safe    fork 2"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST(Watch, OutputAndExitStatusAreTheProgramsOwn) {
  Ran plain = run({FC_WATCH_THREADED, "3"});
  ASSERT_EQ(plain.code, 3) << plain.err;
  auto out = fresh_dir("status");
  Ran watched = watch(out, {FC_WATCH_THREADED, "3"});
  EXPECT_EQ(watched.code, 3) << watched.out << watched.err;
  json rep = report(out);
  EXPECT_EQ(variant(rep)["stdout"].get<std::string>(), plain.out);
  EXPECT_EQ(variant(rep)["stderr"].get<std::string>(), plain.err);
  EXPECT_EQ(variant(rep)["exit"]["code"], 3);
  fs::remove_all(out);
}

TEST(Watch, SignalExitBecomes128PlusTheSignal) {
  auto out = fresh_dir("signal");
  Ran r = watch(out, {FC_FAULT_CHILD, "abort"});
  EXPECT_EQ(r.code, 128 + 6) << r.out << r.err;
  const json rep = report(out);
  EXPECT_EQ(variant(rep)["outcome"], "crash");
  fs::remove_all(out);
}

TEST(Watch, SpawnAndSingleThreadedForksAreNotFlagged) {
  auto out = fresh_dir("spawn");
  Ran r = watch(out, {FC_WATCH_SPAWN_ONLY});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rep = report(out);
  const json& f = forks(rep);
  // Its own fork+exec and fork without exec, and one fork in each "fork-once" child: the
  // posix_spawn'd one (empty environment), the execve'd one (no LD_PRELOAD), the vfork'd one.
  ASSERT_EQ(f.size(), 5u) << f.dump(2);
  EXPECT_EQ(hazardous(f), 0u) << f.dump(2);
  size_t in_children = 0, exec = 0;
  for (const auto& x : f) {
    in_children += x["command"].get<std::string>().find("fork-once") != std::string::npos;
    exec += x["exec"].get<bool>();
    EXPECT_EQ(x["child_end"]["code"], 0) << x.dump(2);
  }
  EXPECT_EQ(in_children, 3u) << "the watch must survive a scrubbed environment";
  EXPECT_EQ(exec, 1u);
  EXPECT_EQ(r.out.find("HAZARD"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST(Watch, OpenMPPoolIsFlaggedUntilPaused) {
  auto out = fresh_dir("omp");
  Ran r = watch(out, {FC_WATCH_OMP});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json rep = report(out);
  ASSERT_EQ(forks(rep).size(), 1u) << forks(rep).dump(2);
  EXPECT_TRUE(has_runtime(forks(rep)[0], "libgomp")) << forks(rep)[0].dump(2);

  // omp_pause_resource_all ends the pool's threads: the fork is single-threaded again.
  r = watch(out, {FC_WATCH_OMP, "pause"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  rep = report(out);
  ASSERT_EQ(forks(rep).size(), 1u) << forks(rep).dump(2);
  EXPECT_TRUE(forks(rep)[0]["hazards"].empty()) << forks(rep)[0].dump(2);
  EXPECT_EQ(forks(rep)[0]["threads"], 1);
  fs::remove_all(out);
}

TEST(Watch, TorchForkAfterParallelOpNamesLibgomp) {
  auto out = fresh_dir("torch");
  Ran r = watch(out, {FC_WATCH_TORCH});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 1u) << f.dump(2);
  EXPECT_TRUE(has_runtime(f[0], "libgomp")) << f[0].dump(2);
  EXPECT_NE(r.out.find("libgomp: an OpenMP pool was active"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("omp_pause_resource_all"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST(Watch, CudaCountsOnceInitialised) {
  auto out = fresh_dir("cuda");
  Ran r = watch(out, {FC_WATCH_CUDA, FC_WATCH_FAKE_LIBCUDA, "init"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 1u) << f.dump(2);
  EXPECT_EQ(f[0]["cuda"]["initialised"], true) << f[0].dump(2);
  ASSERT_EQ(f[0]["hazards"].size(), 1u) << f[0].dump(2);
  EXPECT_EQ(f[0]["hazards"][0]["kind"], "cuda");

  // Loaded but never initialised: the driver is there, the hazard is not.
  r = watch(out, {FC_WATCH_CUDA, FC_WATCH_FAKE_LIBCUDA});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  rep = report(out);
  const json& g = forks(rep);
  ASSERT_EQ(g.size(), 1u) << g.dump(2);
  EXPECT_EQ(g[0]["cuda"]["loaded"], true);
  EXPECT_EQ(g[0]["cuda"]["initialised"], false);
  EXPECT_TRUE(g[0]["hazards"].empty()) << g[0].dump(2);
  fs::remove_all(out);
}

bool python_has_torch() {
  return run({"/usr/bin/python3", "-c", "import torch"}, 120).code == 0;
}

TEST(Watch, PythonMultiprocessingForkIsFlaggedSpawnIsNot) {
  if (!python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 has no torch (python3-torch)";
  Ran plain = run({"/usr/bin/python3", FC_WATCH_MP_TORCH, "fork"});
  ASSERT_EQ(plain.code, 0) << plain.err;

  auto out = fresh_dir("py-fork");
  Ran r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_TORCH, "fork"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json rep = report(out);
  EXPECT_EQ(variant(rep)["stdout"].get<std::string>(), plain.out);
  const json& f = forks(rep);
  ASSERT_EQ(hazardous(f), 1u) << f.dump(2);
  for (const auto& x : f) {
    if (!x["hazards"].empty()) {
      EXPECT_TRUE(has_runtime(x, "libgomp")) << x.dump(2);
    }
  }
  fs::remove_all(out);

  // spawn starts a fresh interpreter (vfork or fork, then exec at once): nothing to flag.
  out = fresh_dir("py-spawn");
  r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_TORCH, "spawn"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json spawned = report(out);
  EXPECT_EQ(hazardous(forks(spawned)), 0u) << forks(spawned).dump(2);
  EXPECT_EQ(r.out.find("HAZARD"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST(Watch, WithoutACommandIsAUsageError) {
  Ran r = run({FC_FORKCHECK, "watch"});
  EXPECT_EQ(r.code, 2) << r.err;
  r = run({FC_FORKCHECK, "watch", "--", "/nonexistent/program"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("watch:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fc::harness
