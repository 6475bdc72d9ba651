// The native cases of forkcheck-repro, end to end: `forkcheck run` of static-init-fork,
// objc-initialize-fork, gomp-fork-hang (escapes, libomp matrix), cuda-before-fork,
// socket-handle-spawn, global-config-spawn, state-not-shared, graceful-shutdown,
// worker-rng-duplication, lock-held-at-fork, shm-bus-error and fd-passing-exhaustion once,
// then what report.json says about each variant's outcome and the evidence it kept.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kCases[] = {"static-init-fork",  "objc-initialize-fork", "gomp-fork-hang",
                              "cuda-before-fork",  "socket-handle-spawn",  "global-config-spawn",
                              "state-not-shared",  "graceful-shutdown",    "worker-rng-duplication",
                              "lock-held-at-fork", "shm-bus-error",        "fd-passing-exhaustion"};

class NativeCases : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = fs::temp_directory_path() / ("forkcheck-nativecases-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "run"};
    for (const char* c : kCases) spec.argv.push_back(c);
    spec.argv.insert(spec.argv.end(), {"--out", out_.string()});
    spec.timeout_s = 300;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    exit_code_ = r.exit.code;
    stdout_ = r.out.text();
    std::ifstream in(out_ / "report.json");
    if (in) report_ = json::parse(in, nullptr, false);
  }
  static void TearDownTestSuite() { fs::remove_all(out_); }

  // Non-const on purpose: a key a variant lacks reads as null (and fails the check) instead of
  // being undefined behaviour as with a const json.
  static json& find_case(const std::string& id) {
    static json none;
    if (!report_.contains("cases")) {
      ADD_FAILURE() << "no report.json with cases; forkcheck printed:\n" << stdout_;
      return none;
    }
    for (auto& c : report_["cases"])
      if (c["id"] == id) return c;
    ADD_FAILURE() << "no case " << id;
    return none;
  }
  static json& variant(const std::string& id, const std::string& name) {
    for (auto& v : find_case(id)["variants"])
      if (v["name"] == name) return v;
    ADD_FAILURE() << "no variant " << id << "/" << name;
    static json none;
    return none;
  }
  static bool contains(const json& s, const std::string& part) {
    return s.is_string() && s.get<std::string>().find(part) != std::string::npos;
  }
  // A worker pid of a finished run must not be a live repro process any more.
  static bool repro_alive(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline;
    std::getline(in, cmdline, '\0');
    return in && cmdline.find("forkcheck-repro") != std::string::npos;
  }

  static inline fs::path out_;
  static inline int exit_code_ = -1;
  static inline std::string stdout_;
  static inline json report_;
};

TEST_F(NativeCases, RunExitsZeroAndEveryVariantMatchedItsExpectation) {
  EXPECT_EQ(exit_code_, 0) << stdout_;
  ASSERT_TRUE(report_.is_object()) << stdout_;
  EXPECT_EQ(report_["summary"]["regressions"], 0);
  for (const char* id : kCases)
    for (auto& v : find_case(id)["variants"]) {
      EXPECT_EQ(v["outcome"], v["expected"]) << id << "/" << v["name"] << ": " << v["message"];
      EXPECT_FALSE(v["expected_why"].get<std::string>().empty()) << id << "/" << v["name"];
    }
}

TEST_F(NativeCases, StaticInitHangsOnTheGuardUnderForkOnly) {
  auto& fork = variant("static-init-fork", "fork");
  EXPECT_EQ(fork["outcome"], "hang");
  EXPECT_TRUE(contains(fork["hang"]["step"], "function-local static")) << fork["hang"];
  EXPECT_FALSE(fork["watchdog"]["deadline_passed"].get<bool>());  // caught at the step
  EXPECT_EQ(fork["details"]["initialiser_in_progress_before_fork"], true);
  // A debugger attached: the child waits in the guard.
  if (fork.value("stacks_method", "proc") != "proc") {
    EXPECT_TRUE(contains(json(fork["stacks"].dump()), "__cxa_guard_acquire")) << fork["stacks"];
  }
  for (const char* name : {"spawn", "forkserver", "fork-init-in-atfork"}) {
    auto& v = variant("static-init-fork", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    EXPECT_EQ(v["details"]["workers"][0]["result"]["value"], 42) << name;
  }
  // The prepare handler finished the initialisation before fork: the child inherited it done.
  EXPECT_EQ(variant("static-init-fork", "fork-init-in-atfork")["details"]["workers"][0]["result"]
                                                              ["constructed_when_worker_started"],
            true);
  EXPECT_EQ(find_case("static-init-fork")["verdict"], "reproduced");
}

TEST_F(NativeCases, ObjcCaseNeedsMacOS) {
  for (const char* name : {"fork", "fork-disable-fork-safety", "spawn"}) {
    auto& v = variant("objc-initialize-fork", name);
#ifdef __APPLE__
    EXPECT_NE(v["outcome"], "skip") << name;
#else
    EXPECT_EQ(v["outcome"], "skip") << name;
    EXPECT_TRUE(contains(v["message"], "macOS")) << v["message"];
    EXPECT_TRUE(contains(v["message"], "static-init-fork")) << v["message"];
#endif
  }
  EXPECT_EQ(variant("objc-initialize-fork",
                    "fork-disable-fork-safety")["env"]["OBJC_DISABLE_INITIALIZE_FORK_SAFETY"],
            "YES");
#ifdef __APPLE__
  EXPECT_EQ(variant("objc-initialize-fork", "fork")["details"]["runtime_message_seen"], true);
  EXPECT_EQ(variant("objc-initialize-fork",
                    "fork-disable-fork-safety")["details"]["runtime_message_seen"],
            false);
#endif
}

TEST_F(NativeCases, GompEscapesUnderForkAndTheRuntimeMatrix) {
  const auto runtimes_of = [](json& v) {
    std::string all;
    for (auto& p : v["details"]["openmp_runtimes_loaded"]) all += p.get<std::string>() + " ";
    return all;
  };
  auto& fork = variant("gomp-fork-hang", "fork");
  EXPECT_EQ(fork["outcome"], "hang");
  EXPECT_NE(runtimes_of(fork).find("libgomp"), std::string::npos) << runtimes_of(fork);

  auto& pause = variant("gomp-fork-hang", "fork-pause-resource");
  if (pause["outcome"] != "skip") {
    EXPECT_EQ(pause["outcome"], "ok") << pause["message"];
    EXPECT_EQ(pause["details"]["omp_pause_resource_all_returned"], 0);
    EXPECT_EQ(pause["details"]["workers"][0]["result"]["threads_in_region"], 2);
  }
  auto& one = variant("gomp-fork-hang", "fork-one-thread-in-child");
  EXPECT_EQ(one["outcome"], "ok") << one["message"];
  EXPECT_EQ(one["details"]["workers"][0]["result"]["threads_in_region"], 1);

  auto& libomp = variant("gomp-fork-hang", "fork-libomp");
  auto& no_atfork = variant("gomp-fork-hang", "fork-libomp-no-atfork");
  if (libomp["outcome"] == "skip") {
    EXPECT_TRUE(contains(libomp["message"], "forkcheck-repro-libomp")) << libomp["message"];
    return;
  }
  EXPECT_TRUE(contains(libomp["program"], "forkcheck-repro-libomp")) << libomp["program"];
  for (json* v : {&libomp, &no_atfork}) {
    const std::string loaded = runtimes_of(*v);
    EXPECT_NE(loaded.find("libomp"), std::string::npos) << (*v)["name"] << ": " << loaded;
    EXPECT_EQ(loaded.find("libgomp"), std::string::npos) << (*v)["name"] << ": " << loaded;
  }
  EXPECT_EQ(libomp["outcome"], "ok") << libomp["message"];
  EXPECT_TRUE(contains(libomp["details"]["workers"][0]["result"]["openmp_runtimes"][0], "libomp"));
  EXPECT_EQ(no_atfork["env"]["KMP_INIT_AT_FORK"], "FALSE");
  EXPECT_EQ(no_atfork["outcome"], "hang") << no_atfork["message"];
  EXPECT_TRUE(contains(no_atfork["hang"]["step"], "OpenMP parallel region"));
}

TEST_F(NativeCases, CudaSaysWhyItSkipsOrShowsTheDriverError) {
  auto& fork = variant("cuda-before-fork", "fork");
  auto& spawn = variant("cuda-before-fork", "spawn");
  if (fork["expected"] == "skip") {
    EXPECT_TRUE(contains(fork["message"], "no CUDA driver: libcuda.so.1 not found") ||
                contains(fork["message"], "CUDA driver present but no device"))
        << fork["message"];
    EXPECT_EQ(spawn["outcome"], "skip");
    return;
  }
  EXPECT_EQ(fork["outcome"], "error");
  EXPECT_TRUE(contains(fork["message"], "cuInit in the worker")) << fork["message"];
  EXPECT_EQ(spawn["outcome"], "ok") << spawn["message"];
  EXPECT_EQ(spawn["details"]["workers"][0]["result"]["cuInit"]["code"], 0);
}

TEST_F(NativeCases, SocketInstanceIsRefusedByCloudpickle) {
  for (const char* name : {"spawn-cloudpickle", "forkserver-cloudpickle"}) {
    auto& v = variant("socket-handle-spawn", name);
    EXPECT_EQ(v["outcome"], "error") << name;
    EXPECT_TRUE(contains(v["message"], "cloudpickle-like serializer refused")) << v["message"];
    // Built from the socket the serializer found: its fd and inode, and where it sat.
    const std::string socket = v["details"]["parent_socket"]["socket"].get<std::string>();
    EXPECT_TRUE(contains(v["message"],
                         "cannot serialize 'socket' object (" + socket + ", at payload.socket)"))
        << v["message"];
    EXPECT_EQ(v["details"]["refused_by"], "cloudpickle-like");
  }
}

TEST_F(NativeCases, SocketInstanceIsSharedByDupfdAndFork) {
  for (const char* name : {"spawn-dupfd", "forkserver-dupfd", "fork-instance"}) {
    auto& v = variant("socket-handle-spawn", name);
    json& d = v["details"];
    EXPECT_EQ(v["outcome"], "error") << name << ": " << v["message"];
    EXPECT_EQ(v["message"].get<std::string>().rfind("shared: the host saw 1 connection(s)", 0), 0u)
        << v["message"];
    // The host saw one connection, the parent's, serve every worker...
    ASSERT_EQ(d["host_connections"].size(), 1u) << d["host_connections"];
    EXPECT_EQ(d["host_connections"][0]["workers"], json::array({0, 1, 2, 3}));
    EXPECT_EQ(d["host_connections"][0]["peer"],
              "127.0.0.1:" + std::to_string(d["parent_socket"]["local_port"].get<int>()));
    // ...and each worker, in its own process, held the parent's open socket (same inode).
    std::set<int> pids;
    for (auto& w : d["workers"]) {
      pids.insert(w["pid"].get<int>());
      EXPECT_EQ(w["result"]["identity"], d["parent_socket"]["identity"]) << name << ": " << w;
      EXPECT_EQ(w["result"]["local_port"], d["parent_socket"]["local_port"]) << name;
    }
    EXPECT_EQ(pids.size(), 4u) << name;
    if (std::string(name) != "fork-instance") {
      EXPECT_EQ(d["descriptors_redeemed"], 4) << name;
    }
    // Astray replies are what the workers read, no more: each one a line that is not an answer
    // to the worker's own request, and the message says "none" exactly when there were none.
    std::size_t astray = 0;
    for (auto& w : d["workers"]) {
      const std::string mine = "reply " + std::to_string(w["result"]["worker"].get<int>()) + " ";
      for (auto& line : w["result"]["received"])
        astray += line.get<std::string>().rfind(mine, 0) == 0 ? 0 : 1;
    }
    EXPECT_EQ(d["astray"].size(), astray) << name << ": " << d["astray"];
    EXPECT_EQ(contains(v["message"], "no reply went astray in this run"), astray == 0)
        << v["message"];
    if (astray > 0) {
      EXPECT_TRUE(contains(v["message"], std::to_string(astray) + " of 8 replies went astray"))
          << v["message"];
    }
  }
}

TEST_F(NativeCases, SocketFactoryConnectsOnePerWorker) {
  for (const char* name : {"spawn-factory", "forkserver-factory", "fork-factory"}) {
    auto& v = variant("socket-handle-spawn", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    EXPECT_EQ(v["details"]["host_connections"].size(), 4u) << name;
    for (auto& c : v["details"]["host_connections"]) EXPECT_EQ(c["workers"].size(), 1u) << c;
    for (auto& w : v["details"]["workers"]) {
      const std::string mine = "reply " + std::to_string(w["result"]["worker"].get<int>()) + " ";
      for (auto& line : w["result"]["received"])
        EXPECT_EQ(line.get<std::string>().rfind(mine, 0), 0u) << name << ": " << line;
    }
  }
  // The serializer that refused the instance passed the factory: it refuses handles, not Envs.
  EXPECT_EQ(variant("socket-handle-spawn", "spawn-factory")["details"]["serializer"],
            "cloudpickle-like");
  EXPECT_EQ(find_case("socket-handle-spawn")["verdict"], "reproduced");
}

TEST_F(NativeCases, GlobalConfigKeysAreLostOutsideFork) {
  const json all_keys = {"PARAMS_RL_FILE", "ROOT", "server_ip", "server_port"};
  for (const char* name : {"fork", "spawn-setup-in-worker", "spawn-config-in-payload",
                           "forkserver-config-in-payload"}) {
    auto& v = variant("global-config-spawn", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    ASSERT_EQ(v["details"]["workers"].size(), 4u) << name;
    for (auto& w : v["details"]["workers"]) EXPECT_EQ(w["result"]["keys"], all_keys) << name;
  }
  for (const char* name : {"spawn", "forkserver"}) {
    auto& v = variant("global-config-spawn", name);
    EXPECT_EQ(v["outcome"], "error") << name;
    EXPECT_TRUE(contains(v["message"], "sees only [\"ROOT\"]")) << v["message"];
    EXPECT_TRUE(contains(v["message"], "lost PARAMS_RL_FILE, server_ip, server_port"))
        << v["message"];
    for (auto& w : v["details"]["workers"]) EXPECT_EQ(w["status"], "error") << name;
  }
}

TEST_F(NativeCases, PortCounterStaysZeroInTheParentUnlessShared) {
  for (const char* name : {"fork", "spawn"}) {
    auto& v = variant("state-not-shared", name);
    EXPECT_EQ(v["outcome"], "error") << name;
    EXPECT_TRUE(contains(v["message"], "parent sees 0 ports in use after 4 workers each took one"))
        << v["message"];
    EXPECT_EQ(v["details"]["parent_sees_ports_in_use"], 0);
    EXPECT_EQ(v["details"]["ports_taken"], json::array({4100}));  // every worker took the same port
  }
  for (const char* name :
       {"fork-shared-memory", "spawn-shared-memory", "spawn-ports-from-parent"}) {
    auto& v = variant("state-not-shared", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    EXPECT_EQ(v["details"]["parent_sees_ports_in_use"], 4) << name;
    EXPECT_EQ(v["details"]["ports_taken"], json::array({4100, 4101, 4102, 4103})) << name;
  }
}

TEST_F(NativeCases, GracefulShutdownForcesOnlyTheWorkerThatIgnoresSigterm) {
  for (const char* name : {"fork", "spawn", "forkserver"}) {
    auto& v = variant("graceful-shutdown", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    json& d = v["details"];
    int stubborn = -1;
    for (auto& r : d["roles"])
      if (r["role"] == "stubborn") {
        stubborn = r["pid"].get<int>();
        EXPECT_EQ(r["sigterm"], "ignored");
      } else {
        EXPECT_EQ(r["sigterm"], "caught");
      }
    EXPECT_EQ(d["forced"], json::array({stubborn})) << name;
    EXPECT_EQ(d["warnings"], json::array({"Warning: Process " + std::to_string(stubborn) +
                                          " did not terminate gracefully, forcing..."}));
    EXPECT_TRUE(contains(v["stdout"].dump(), "did not terminate gracefully, forcing..."));
    for (auto& e : d["ends"]) {
      // Each end carries what a pool's worker entries carry (repros/core/pool.h).
      EXPECT_EQ(e["start_method"], v["start_method"]) << e;
      EXPECT_TRUE(e.contains("ended_after_s")) << e;
      if (e["role"] == "polite") {
        EXPECT_EQ(e["exit_code"], 0) << e;
      } else {
        EXPECT_EQ(e["signal_name"], "SIGKILL") << e;
        EXPECT_EQ(e["core_dumped"], false) << e;
        EXPECT_EQ(e["forced"], true) << e;
      }
    }
    EXPECT_TRUE(d["left_behind"].empty()) << d["left_behind"];
    for (auto& pid : d["worker_pids"]) EXPECT_FALSE(repro_alive(pid.get<int>())) << pid;
  }
  auto& hazard = variant("graceful-shutdown", "fork-join-no-deadline");
  EXPECT_EQ(hazard["outcome"], "hang");
  EXPECT_TRUE(contains(hazard["hang"]["step"], "no deadline")) << hazard["hang"];
  for (auto& pid : hazard["details"]["worker_pids"])
    EXPECT_FALSE(repro_alive(pid.get<int>())) << pid;
}

TEST_F(NativeCases, ForkedWorkersDrawTheSameAugmentationsUnlessSeededApart) {
  // Duplicated draws: every worker's sequence is one and the same, and the message quotes it.
  for (const char* name : {"fork", "spawn-constant-seed"}) {
    auto& v = variant("worker-rng-duplication", name);
    EXPECT_EQ(v["outcome"], "error") << name << ": " << v["message"];
    json& d = v["details"];
    EXPECT_EQ(d["distinct_sequences"], 1) << name;
    ASSERT_EQ(d["workers"].size(), 4u) << name;
    char first[32];
    std::snprintf(first, sizeof first, "%.4f", d["workers"][0]["result"]["draws"][0].get<double>());
    EXPECT_TRUE(
        contains(v["message"], "workers 0, 1, 2, 3 drew the same 8 values: " + std::string(first)))
        << v["message"];
  }
  // Under fork the workers carry on the parent's own sequence, seeded once from entropy there.
  json& fork = variant("worker-rng-duplication", "fork")["details"];
  EXPECT_EQ(fork["parent_seeded_with"], "os-entropy");
  EXPECT_EQ(fork["workers_continuing_parents_sequence"], 4);
  for (auto& w : fork["workers"]) EXPECT_EQ(w["result"]["generator_state_inherited"], true);
  // Under spawn nothing was inherited: the constant seed alone made them equal.
  for (auto& w : variant("worker-rng-duplication", "spawn-constant-seed")["details"]["workers"]) {
    EXPECT_EQ(w["result"]["generator_state_inherited"], false);
    EXPECT_EQ(w["result"]["seeded_with"], "constant-default");
  }
  const std::pair<const char*, const char*> fixes[] = {
      {"fork-worker-init-fn", "base_seed+worker_id"},
      {"spawn", "os-entropy"},
      {"forkserver", "os-entropy"},
      {"spawn-constant-seed-worker-init-fn", "base_seed+worker_id"}};
  for (const auto& [name, seeded_with] : fixes) {
    auto& v = variant("worker-rng-duplication", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    EXPECT_EQ(v["details"]["distinct_sequences"], 4) << name;
    for (auto& w : v["details"]["workers"]) EXPECT_EQ(w["result"]["seeded_with"], seeded_with);
  }
  EXPECT_EQ(find_case("worker-rng-duplication")["source"]["url"],
            "https://github.com/pytorch/pytorch/issues/5059");
  EXPECT_EQ(find_case("worker-rng-duplication")["verdict"], "reproduced");
}

TEST_F(NativeCases, LockHeldAtForkHangsTheChildsFirstLogLine) {
  // The handshake put every variant's fork inside the flusher's critical section.
  for (const char* name :
       {"fork", "spawn", "forkserver", "fork-atfork-handler", "fork-reinit-in-child"})
    EXPECT_EQ(
        variant("lock-held-at-fork", name)["details"]["log_mutex_held_by_flusher_before_fork"],
        true)
        << name;
  auto& fork = variant("lock-held-at-fork", "fork");
  EXPECT_EQ(fork["outcome"], "hang");
  EXPECT_TRUE(contains(fork["hang"]["step"], "first log line")) << fork["hang"];
  EXPECT_FALSE(fork["watchdog"]["deadline_passed"].get<bool>());  // caught at the step
  if (fork.value("stacks_method", "proc") != "proc") {  // a debugger attached: waits in log_line
    EXPECT_TRUE(contains(json(fork["stacks"].dump()), "log_line")) << fork["stacks"];
  }
  for (const char* name : {"spawn", "forkserver", "fork-atfork-handler", "fork-reinit-in-child"}) {
    auto& v = variant("lock-held-at-fork", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    EXPECT_EQ(v["details"]["workers"].size(), 2u) << name;
    for (auto& w : v["details"]["workers"]) EXPECT_EQ(w["result"]["lines_logged"], 1) << name;
  }
  // The prepare handler made fork() wait for the flusher to leave; re-initialising did not wait.
  for (auto& w : variant("lock-held-at-fork", "fork-atfork-handler")["details"]["workers"])
    EXPECT_EQ(w["result"]["flusher_had_left_at_fork"], true);
  for (auto& w : variant("lock-held-at-fork", "fork-reinit-in-child")["details"]["workers"]) {
    EXPECT_EQ(w["result"]["flusher_had_left_at_fork"], false);
    EXPECT_EQ(w["result"]["log_mutex_reinitialised"], true);
  }
  EXPECT_EQ(find_case("lock-held-at-fork")["source"]["url"],
            "https://github.com/python/cpython/issues/50970");
  EXPECT_EQ(find_case("lock-held-at-fork")["verdict"], "reproduced");
}

TEST_F(NativeCases, ShmBusErrorKillsAWriterWithSigbusUntilTheStoragesFit) {
  if (auto& fork = variant("shm-bus-error", "fork"); fork["outcome"] == "skip")
    GTEST_SKIP() << fork["skip_reason"];  // no mount namespace here: the reason is the errno
  std::ifstream in("/proc/self/mountinfo");
  const std::string mounts((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* name : {"fork", "spawn", "forkserver"}) {
    auto& v = variant("shm-bus-error", name);
    json& d = v["details"];
    EXPECT_EQ(v["outcome"], "crash") << name << ": " << v["message"];
    EXPECT_TRUE(contains(v["message"], "killed by SIGBUS")) << v["message"];
    EXPECT_EQ(d["filesystem"], "tmpfs") << name;
    EXPECT_TRUE(contains(d["mounted_in"], "mount namespace of its own")) << d["mounted_in"];
    EXPECT_EQ(d["filesystem_bytes"], 4 << 20) << name;
    EXPECT_EQ(d["free_bytes_after"], 0) << name;  // the writer died because the tmpfs was full
    // Each worker that died has a storage whose pages end before its size: where it was writing.
    int died = 0;
    for (size_t w = 0; w < d["workers"].size(); ++w) {
      if (d["workers"][w]["status"] != "crash") continue;
      ++died;
      EXPECT_EQ(d["workers"][w]["signal_name"], "SIGBUS") << name;
      bool cut_short = false;
      for (auto& s : d["storages"])
        if (s["name"].get<std::string>().rfind("w" + std::to_string(w) + "-", 0) == 0 &&
            s.value("exists", false))
          cut_short = cut_short || s["first_hole"].get<long long>() < s["size"].get<long long>();
      EXPECT_TRUE(cut_short) << name << " worker " << w << ": " << d["storages"];
    }
    EXPECT_GE(died, 1) << name;
    // The tmpfs lived in the variant's own mount namespace: never seen here, and gone after.
    const std::string dir = d["storage_dir"].get<std::string>();
    EXPECT_EQ(mounts.find(dir), std::string::npos) << dir;
    EXPECT_FALSE(fs::exists(dir)) << dir;
  }
  EXPECT_TRUE(
      contains(variant("shm-bus-error", "forkserver")["details"]["workers_open"], "/proc/"));
  for (const char* name : {"fork-bigger-shm", "fork-storage-on-disk"}) {
    auto& v = variant("shm-bus-error", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    ASSERT_EQ(v["details"]["storages"].size(), 6u) << name;
    for (auto& s : v["details"]["storages"])  // the parent mapped each and read it back
      EXPECT_EQ(s["bytes_not_as_written"], 0) << name << ": " << s;
    EXPECT_FALSE(fs::exists(v["details"]["storage_dir"].get<std::string>())) << name;
  }
  EXPECT_EQ(variant("shm-bus-error", "fork-bigger-shm")["details"]["filesystem_bytes"], 16 << 20);
  EXPECT_EQ(find_case("shm-bus-error")["verdict"], "reproduced");
}

TEST_F(NativeCases, FdPassingLosesDescriptorsAtTheReceiversLimitOnly) {
  for (const char* name : {"fork", "spawn"}) {
    auto& v = variant("fd-passing-exhaustion", name);
    json& d = v["details"];
    EXPECT_EQ(v["outcome"], "error") << name << ": " << v["message"];
    EXPECT_TRUE(contains(v["message"], "received 0 items of ancdata with MSG_CTRUNC set"))
        << v["message"];
    json& t = d["first_truncation"];
    EXPECT_EQ(t["ancdata_items"], 0) << t;
    EXPECT_EQ(t["msg_ctrunc"], true) << t;
    EXPECT_EQ(t["descriptors_open"], 32) << t;  // every slot under the limit was taken
    EXPECT_EQ(t["rlimit_nofile"], 32) << t;
    EXPECT_EQ(d["messages_arrived"], 48) << name;  // the data came; only descriptors were lost
    EXPECT_LT(d["storages_mapped"].get<int>(), 48) << name;
    EXPECT_EQ(d["storages_mapped"].get<int>() + d["truncated"].get<int>(), 48) << name;
    for (auto& w : d["workers"]) EXPECT_EQ(w["status"], "ok") << w;  // the senders were fine
  }
  auto& names = variant("fd-passing-exhaustion", "fork-file-system");
  EXPECT_EQ(names["outcome"], "ok") << names["message"];
  EXPECT_EQ(names["details"]["storages_mapped"], 48);
  EXPECT_EQ(names["details"]["rlimit_nofile"], 32);
  EXPECT_LT(names["details"]["peak_descriptors_open"].get<int>(), 32);
  auto& higher = variant("fd-passing-exhaustion", "fork-higher-limit");
  EXPECT_EQ(higher["outcome"], "ok") << higher["message"];
  EXPECT_EQ(higher["details"]["storages_mapped"], 48);
  EXPECT_EQ(higher["details"]["rlimit_nofile"], 1024);
  // It needed the room: the parent held one descriptor per storage, past the low limit.
  EXPECT_GT(higher["details"]["peak_descriptors_open"].get<int>(), 48);
  EXPECT_EQ(find_case("fd-passing-exhaustion")["verdict"], "reproduced");
}

}  // namespace
