// The torch cases of the catalogue, end to end: `forkcheck run` of torch-omp-pool-hang,
// hogwild-shared-memory and selfplay-pipeline once, then what report.json says about each
// variant's outcome and evidence; cow-refcount-growth in a run of its own (its own fixture, so
// that a filter on it runs it alone).
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TorchCases : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = fs::temp_directory_path() / ("forkcheck-torchcases-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK,
                 "run",
                 "torch-omp-pool-hang",
                 "hogwild-shared-memory",
                 "selfplay-pipeline",
                 "torchscript-pickle-spawn",
                 "--out",
                 out_.string()};
    spec.timeout_s = 300;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    exit_code_ = r.exit.code;
    stdout_ = r.out.text();
    std::ifstream in(out_ / "report.json");
    if (in) report_ = json::parse(in, nullptr, false);
  }
  static void TearDownTestSuite() { fs::remove_all(out_); }
  // The four cases asked for, or every loop below would pass having checked nothing.
  void SetUp() override {
    ASSERT_TRUE(report_.is_object() && report_["cases"].is_array())
        << "no report.json: " << stdout_;
    ASSERT_EQ(report_["cases"].size(), 4u) << "cases are missing from the run";
  }

  static const json& find_case(const std::string& id) {
    for (const auto& c : report_["cases"])
      if (c["id"] == id) return c;
    ADD_FAILURE() << "no case " << id;
    static json none;
    return none;
  }
  static const json& variant(const std::string& id, const std::string& name) {
    for (const auto& v : find_case(id)["variants"])
      if (v["name"] == name) return v;
    ADD_FAILURE() << "no variant " << id << "/" << name;
    static json none;
    return none;
  }
  static bool contains(const json& s, const std::string& part) {
    return s.is_string() && s.get<std::string>().find(part) != std::string::npos;
  }

  static inline fs::path out_;
  static inline int exit_code_ = -1;
  static inline std::string stdout_;
  static inline json report_;
};

TEST_F(TorchCases, RunExitsZeroWithNoRegression) {
  EXPECT_EQ(exit_code_, 0) << stdout_;
  ASSERT_TRUE(report_.is_object());
  EXPECT_EQ(report_["summary"]["regressions"], 0);
  EXPECT_EQ(report_["summary"]["harness_failures"], 0);
}

TEST_F(TorchCases, NothingLeftInDevShmOrTmpEvenByHungVariants) {
  size_t checked = 0;
  for (const char* id : {"hogwild-shared-memory", "selfplay-pipeline"}) {
    for (const auto& v : find_case(id)["variants"]) {
      const json& d = v["details"];
      const std::string where = std::string(id) + "/" + v["name"].get<std::string>();
      ASSERT_TRUE(d.contains("shm_segment")) << where;
      EXPECT_FALSE(fs::exists("/dev/shm" + d["shm_segment"].get<std::string>())) << where;
      if (d.contains("scratch_dir")) {
        EXPECT_FALSE(fs::exists(d["scratch_dir"].get<std::string>())) << where;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7u);
  for (const auto& v : find_case("torchscript-pickle-spawn")["variants"]) {
    ASSERT_TRUE(v["details"].contains("scratch_dir")) << v["name"];
    EXPECT_FALSE(fs::exists(v["details"]["scratch_dir"].get<std::string>())) << v["name"];
    ++checked;
  }
  EXPECT_EQ(checked, 11u);
}

TEST_F(TorchCases, TorchPoolHangsUnderForkAtTheOp) {
  const auto& fork = variant("torch-omp-pool-hang", "fork");
  EXPECT_EQ(fork["expected"], "hang");
  EXPECT_EQ(fork["outcome"], "hang") << fork["message"];
  ASSERT_TRUE(fork.contains("hang"));
  EXPECT_TRUE(contains(fork["hang"]["step"], "sum() of a 512x512 tensor")) << fork["hang"];
  EXPECT_FALSE(fork["watchdog"]["deadline_passed"].get<bool>());
  // The evidence: which op went parallel in the parent, with how many threads.
  const json& d = fork["details"];
  EXPECT_EQ(d["parent_intra_op_threads"], 2);
  EXPECT_TRUE(contains(d["parent_op_that_entered_openmp"], "sum()")) << d;
  bool sum_parallel = false;
  for (const auto& op : d["parent_ops"])
    if (contains(op["op"], "sum()")) sum_parallel = op["went_parallel"].get<bool>();
  EXPECT_TRUE(sum_parallel) << d["parent_ops"];
  EXPECT_EQ(find_case("torch-omp-pool-hang")["verdict"], "reproduced");
}

TEST_F(TorchCases, TorchPoolShowsTheMachinesDefaultBesideTheForcedCount) {
  const auto& dflt = variant("torch-omp-pool-hang", "fork-default-threads");
  const auto& forced = variant("torch-omp-pool-hang", "fork");
  // Every variant records the thread counts it started with and the machine's default.
  const json& start = forced["details"]["threads"]["default"];
  ASSERT_TRUE(start.contains("torch_intra_op")) << forced["details"];
  ASSERT_TRUE(start.contains("omp_max_threads")) << forced["details"];
  const int machine = start["torch_intra_op"].get<int>();
  EXPECT_EQ(dflt["details"]["machine_default_intra_op_threads"], machine);
  EXPECT_EQ(forced["details"]["intra_op_threads_forced"], 2);
  EXPECT_TRUE(contains(forced["expected_why"], "libgomp")) << "names the runtime";
  if (machine < 2) {
    // No team at the default: nothing to inherit, and the report says so.
    EXPECT_EQ(dflt["expected"], "ok");
    EXPECT_EQ(dflt["outcome"], "ok") << dflt["message"];
    EXPECT_TRUE(contains(dflt["expected_why"], "no OpenMP team")) << dflt["expected_why"];
    EXPECT_TRUE(contains(forced["expected_why"], "forced")) << forced["expected_why"];
    for (const auto& w : dflt["details"]["workers"])
      EXPECT_FALSE(w["result"]["went_parallel"].get<bool>()) << w;
  } else {
    EXPECT_EQ(dflt["expected"], "hang");
  }
}

TEST_F(TorchCases, TorchPoolFixesFinishAndSayWhy) {
  const auto& one = variant("torch-omp-pool-hang", "fork-set-num-threads-1");
  EXPECT_EQ(one["outcome"], "ok") << one["message"];
  EXPECT_TRUE(contains(one["expected_why"], "limiting intra-op parallelism"));
  EXPECT_EQ(one["details"]["intra_op_threads_at_start"], 1);
  for (const auto& w : one["details"]["workers"]) {
    EXPECT_EQ(w["result"]["intra_op_threads"], 1);
    EXPECT_FALSE(w["result"]["went_parallel"].get<bool>());
  }
  for (const char* name : {"spawn", "forkserver"}) {
    const auto& v = variant("torch-omp-pool-hang", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    ASSERT_EQ(v["details"]["workers"].size(), 2u) << name;
    // The same op with 2 threads does go parallel in a clean process, and returns.
    for (const auto& w : v["details"]["workers"]) {
      EXPECT_EQ(w["result"]["intra_op_threads"], 2) << name;
      EXPECT_TRUE(w["result"]["went_parallel"].get<bool>()) << name << ": " << w;
    }
  }
}

TEST_F(TorchCases, HogwildLossGoesDownCloseToTheSingleProcessRun) {
  for (const char* name : {"spawn", "spawn-locked", "forkserver"}) {
    const auto& v = variant("hogwild-shared-memory", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    const json& d = v["details"];
    const double initial = d["initial_loss"].get<double>();
    const double final_loss = d["final_loss"].get<double>();
    const double baseline = d["single_process"]["final_loss"].get<double>();
    EXPECT_LT(final_loss, 0.05 * initial) << name;
    EXPECT_LE(std::abs(final_loss - baseline), 0.25 * baseline) << name;
    EXPECT_TRUE(d["went_down"].get<bool>());
    EXPECT_TRUE(d["close_to_single_process"].get<bool>());
    // The curves: the parent's view over time, the baseline's, every worker's own.
    const json& curve = d["parent_loss_curve"];
    ASSERT_GE(curve.size(), 2u) << name;  // at least before and after; usually dozens
    // Where the parent's view ended, against where training began: not its first sample, which
    // may come after the loss has converged already (scheduling decides).
    EXPECT_LT(curve.back()[2].get<double>(), 0.05 * initial) << name;
    EXPECT_GE(d["single_process"]["full_loss_curve"].size(), 10u);
    EXPECT_EQ(d["steps_applied"], d["single_process"]["steps"]);
    ASSERT_EQ(d["workers"].size(), 2u);
    for (const auto& w : d["workers"]) {
      const json& losses = w["result"]["losses"];
      ASSERT_GE(losses.size(), 10u);
      EXPECT_EQ(losses.size(), w["result"]["loss_steps"].size());
      EXPECT_LT(losses.back().get<double>(), losses.front().get<double>());
    }
    EXPECT_TRUE(d["shm_unlinked_before_training"].get<bool>());
    EXPECT_FALSE(d["shm_exists_after"].get<bool>());
  }
  EXPECT_GT(variant("hogwild-shared-memory",
                    "spawn-locked")["details"]["workers"][0]["result"]["lock_wait_seconds"]
                .get<double>(),
            -1.0);
}

TEST_F(TorchCases, HogwildPrivateCopiesNeverReachTheParent) {
  const auto& v = variant("hogwild-shared-memory", "private-copy");
  EXPECT_EQ(v["outcome"], "error") << v["message"];
  EXPECT_TRUE(contains(v["message"], "did not go down")) << v["message"];
  const json& d = v["details"];
  EXPECT_DOUBLE_EQ(d["final_loss"].get<double>(), d["initial_loss"].get<double>());
  ASSERT_EQ(d["workers"].size(), 2u);
  for (const auto& w : d["workers"]) {  // while each worker's own copy did learn
    const json& losses = w["result"]["losses"];
    ASSERT_FALSE(losses.empty());
    EXPECT_LT(losses.back().get<double>(), 0.05 * losses.front().get<double>());
  }
  // What the reports draw: the parent's reads stay flat; the workers' own curves go down.
  ASSERT_EQ(d["charts"].size(), 2u);
  const json& seen = d["charts"][0]["series"][0]["y"];
  ASSERT_FALSE(seen.empty());
  for (const auto& y : seen) EXPECT_DOUBLE_EQ(y.get<double>(), d["initial_loss"].get<double>());
  EXPECT_EQ(d["charts"][1]["series"].size(), 2u);
  ASSERT_EQ(d["tables"].size(), 1u);
  EXPECT_EQ(d["tables"][0]["rows"].size(), 2u);
  EXPECT_EQ(d["tables"][0]["rows"][0]["cells"][1], d["workers"][0]["pid"]);
  EXPECT_EQ(find_case("hogwild-shared-memory")["verdict"], "reproduced");
}

// The source's failure (001): the scripted module through libtorch's own pickler to a spawned
// worker; the parent fails on the same bytes, so the fault is the pickle, not the process.
TEST_F(TorchCases, TorchscriptPickledModuleFailsInTheWorkerAndInTheParentAlike) {
  const auto& v = variant("torchscript-pickle-spawn", "spawn-pickled-module");
  EXPECT_EQ(v["expected"], "error");
  EXPECT_EQ(v["outcome"], "error") << v["message"];
  const json& d = v["details"];
  const std::string cls = d["model"]["class"].get<std::string>();
  EXPECT_EQ(cls, "__torch__.Net");  // the class libtorch compiled, as Python names it
  // The pickle names the class and carries no code; the archive carries the code.
  EXPECT_TRUE(d["pickle"]["names_the_class"].get<bool>()) << d["pickle"];
  EXPECT_FALSE(d["pickle"]["holds_forward_code"].get<bool>()) << d["pickle"];
  EXPECT_TRUE(d["archive"]["holds_forward_code"].get<bool>()) << d["archive"];
  EXPECT_TRUE(d["pickle"]["records"].dump().find("code/") == std::string::npos) << d["pickle"];
  // The error is the spawned worker's, thrown by its pickle_load of the bytes the parent wrote
  // (their count is the parent's measurement), and libtorch's text names the class.
  ASSERT_EQ(d["workers"].size(), 1u);
  const json& w = d["workers"][0];
  EXPECT_EQ(w["status"], "error");
  EXPECT_EQ(w["start_method"], "spawn");
  const std::string bytes = std::to_string(d["pickle"]["bytes"].get<long>());
  EXPECT_TRUE(contains(w["error"], "pickle_load of the " + bytes + " bytes")) << w["error"];
  EXPECT_TRUE(contains(w["error"], cls)) << w["error"];
  EXPECT_EQ(v["message"].get<std::string>().rfind(w["error"].get<std::string>(), 0), 0u)
      << v["message"];
  // The parent's own pickle_load of the same bytes: the same libtorch error, so the fault is
  // the pickle (no code, no class resolver), not the process boundary.
  const json& parent = d["parent_pickle_load"];
  ASSERT_FALSE(parent["ok"].get<bool>()) << parent;
  EXPECT_TRUE(contains(parent["error"], cls)) << parent;
  EXPECT_TRUE(contains(w["error"], parent["error"].get<std::string>())) << w["error"];
  EXPECT_TRUE(contains(v["message"], "failed the same way")) << v["message"];
  EXPECT_TRUE(contains(v["expected_why"], "no process can load these bytes")) << v["expected_why"];
  EXPECT_EQ(find_case("torchscript-pickle-spawn")["verdict"], "reproduced");
}

// The fix (Module::save, torch::jit::load in the worker) and the fork contrast: the worker ran
// the parent's weights, by its probe's output.
TEST_F(TorchCases, TorchscriptSavedOrInheritedModuleRunsTheParentsWeights) {
  const struct {
    const char* name;
    const char* role;
    const char* source;
  } rows[] = {{"spawn-saved-module", "fix", "torch::jit::load"},
              {"forkserver-saved-module", "fix", "torch::jit::load"},
              {"fork-inherited-module", "hazard", "inherited through fork"}};
  for (const auto& row : rows) {
    const auto& v = variant("torchscript-pickle-spawn", row.name);
    EXPECT_EQ(v["role"], row.role) << row.name;
    EXPECT_EQ(v["outcome"], "ok") << row.name << ": " << v["message"];
    const json& d = v["details"];
    ASSERT_EQ(d["workers"].size(), 1u) << row.name;
    const json& r = d["workers"][0]["result"];
    EXPECT_TRUE(contains(r["model_source"], row.source)) << row.name << ": " << r["model_source"];
    const double reference = d["parent_probe_checksum"].get<double>();
    EXPECT_NE(reference, 0.0);
    EXPECT_NEAR(r["probe_checksum"].get<double>(), reference, 1e-5 * std::abs(reference))
        << row.name;
  }
}

// The fix (each worker loads the saved module) and the fork contrast (the module inherited): every
// actor ran inference with the parent's weights, and the pipeline's counts add up.
TEST_F(TorchCases, SelfplayActorsRunTheParentsModelAndCountsAddUp) {
  for (const char* name : {"spawn", "forkserver", "fork-inherited-module"}) {
    const auto& v = variant("selfplay-pipeline", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    const json& d = v["details"];
    const json& counts = d["counts"];
    EXPECT_TRUE(counts["add_up"].get<bool>()) << counts;
    EXPECT_GT(counts["expected"].get<long>(), 0);
    for (const char* k : {"sent", "written_by_writer", "lines_in_file"})
      EXPECT_EQ(counts[k], counts["expected"]) << name << " " << k;
    const double reference = d["parent_probe_checksum"].get<double>();
    EXPECT_NE(reference, 0.0);
    const bool inherited = std::string(name) == "fork-inherited-module";
    ASSERT_EQ(d["actors"].size(), 2u) << name;
    std::set<int> pids;
    for (const auto& a : d["actors"]) {
      const json& r = a["result"];
      pids.insert(r["pid"].get<int>());
      EXPECT_NEAR(r["probe_checksum"].get<double>(), reference, 1e-5 * std::abs(reference)) << name;
      EXPECT_TRUE(
          contains(r["model_source"], inherited ? "inherited through fork" : "torch::jit::load"))
          << name << ": " << r["model_source"];
      EXPECT_EQ(r["intra_op_threads"], d["thread_counts"]["intra_op"]) << name;
      EXPECT_GT(r["omp_max_threads"].get<int>(), 0) << name;
    }
    EXPECT_EQ(pids.size(), 2u) << "two distinct actor processes";
    EXPECT_EQ(pids.count(d["writer"]["pid"].get<int>()), 0u);
    EXPECT_EQ(d["most_forwards_at_once"], 1) << name;
    EXPECT_FALSE(d.contains("parent_forward_before_fork")) << name;
    EXPECT_GT(d["writer_rate"]["records_per_second"].get<double>(), 0.0) << name;
  }
}

// The pipeline has no hazard that fails on a CPU: its fork variant works, and the verdict says
// so rather than claiming the source's failure (that is torchscript-pickle-spawn's).
TEST_F(TorchCases, SelfplayPipelineSaysNoHazardOfItsFailsHere) {
  const json& c = find_case("selfplay-pipeline");
  EXPECT_EQ(c["verdict"], "not-reproduced");
  EXPECT_TRUE(contains(c["verdict_reason"], "ok here, as expected: fork-inherited-module"))
      << c["verdict_reason"];
  EXPECT_EQ(c["variants"].size(), 3u);
}

// cow-refcount-growth: what each variant's workers measured of their own private memory. Memory,
// not time: nothing here depends on how long anything took or on the machine's load.
class CowRefcountGrowth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = fs::temp_directory_path() / ("forkcheck-cowcase-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "run", "cow-refcount-growth", "--out", out_.string()};
    spec.timeout_s = 300;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    exit_code_ = r.exit.code;
    stdout_ = r.out.text();
    std::ifstream in(out_ / "report.json");
    if (in) report_ = json::parse(in, nullptr, false);
  }
  static void TearDownTestSuite() { fs::remove_all(out_); }
  void SetUp() override {
    ASSERT_TRUE(report_.is_object() && report_["cases"].is_array())
        << "no report.json: " << stdout_;
    ASSERT_EQ(report_["cases"].size(), 1u);
  }
  static const json& variant(const std::string& name) {
    for (const auto& v : report_["cases"][0]["variants"])
      if (v["name"] == name) return v;
    ADD_FAILURE() << "no variant " << name;
    static json none;
    return none;
  }

  static inline fs::path out_;
  static inline int exit_code_ = -1;
  static inline std::string stdout_;
  static inline json report_;
};

// The figures every variant carries: each worker's Private_Dirty before and after, the samples'
// footprint in the parent, the rule and its threshold; the mean is the workers' own figures'.
TEST_F(CowRefcountGrowth, EveryVariantCarriesTheWorkersMeasurements) {
  EXPECT_EQ(exit_code_, 0) << stdout_;
  EXPECT_EQ(report_["cases"][0]["verdict"], "reproduced") << report_["cases"][0]["verdict_reason"];
  ASSERT_EQ(report_["cases"][0]["variants"].size(), 4u);
  for (const auto& v : report_["cases"][0]["variants"]) {
    const std::string name = v["name"].get<std::string>();
    const json& d = v["details"];
    ASSERT_TRUE(d.contains("workers_private_memory")) << name << ": " << v["message"];
    ASSERT_EQ(d["workers_private_memory"].size(), 4u) << name;
    double sum = 0;
    for (const auto& w : d["workers_private_memory"]) {
      const long long before = w["private_dirty_kib_before"].get<long long>(),
                      after = w["private_dirty_kib_after"].get<long long>();
      EXPECT_GE(before, 0) << name;
      EXPECT_EQ(w["growth_kib"].get<long long>(), after - before) << name;
      sum += static_cast<double>(after - before);
    }
    EXPECT_DOUBLE_EQ(d["mean_growth_kib"].get<double>(), sum / 4) << name;
    EXPECT_GT(d["samples_footprint_kib"].get<double>(), 1024) << name << ": at least 1 MiB";
    EXPECT_DOUBLE_EQ(d["rule"]["threshold_kib"].get<double>(),
                     0.5 * d["samples_footprint_kib"].get<double>())
        << name;
    for (const auto& w : d["workers"])
      EXPECT_EQ(w["result"]["checksum"], d["parent_checksum"]) << name << ": read what was built";
  }
}

// fork over a list of objects: each worker's growth is at least the rule's half of the samples'
// footprint, and the message gives the measured figures.
TEST_F(CowRefcountGrowth, ForkedWorkersCopyTheListsPages) {
  const json& v = variant("fork");
  EXPECT_EQ(v["expected"], "error");
  ASSERT_EQ(v["outcome"], "error") << v["message"];
  const json& d = v["details"];
  EXPECT_GE(d["mean_growth_kib"].get<double>(), d["rule"]["threshold_kib"].get<double>());
  for (const auto& w : d["workers_private_memory"])
    EXPECT_GE(w["growth_kib"].get<double>(), d["rule"]["threshold_kib"].get<double>()) << w;
  EXPECT_GT(d["pages_holding_reference_counts"].get<long long>(), 1000) << "counts on every page";
  const std::string m = v["message"].get<std::string>();
  EXPECT_NE(m.find("the 4 forked workers' private memory grew by "), std::string::npos) << m;
  EXPECT_NE(m.find("reading 100,000 samples that take "), std::string::npos) << m;
  EXPECT_NE(m.find("were copied into each worker"), std::string::npos) << m;
}

// The fixes: one flat tensor under fork, a shared segment under spawn and forkserver. Each
// worker's growth stays under a tenth of the samples' footprint (the rule's line is a half), and
// the segment is gone afterwards.
TEST_F(CowRefcountGrowth, FlatTensorAndSharedMemoryCopyNothing) {
  for (const char* name : {"fork-flat-tensor", "spawn-shared-memory", "forkserver-shared-memory"}) {
    const json& v = variant(name);
    EXPECT_EQ(v["expected"], "ok") << name;
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    const json& d = v["details"];
    const double footprint = d["samples_footprint_kib"].get<double>();
    for (const auto& w : d["workers_private_memory"])
      EXPECT_LT(w["growth_kib"].get<double>(), 0.1 * footprint) << name << ": " << w;
    EXPECT_NE(v["message"].get<std::string>().find("under the 50%"), std::string::npos)
        << v["message"];
    if (d.contains("shm_segment")) {
      EXPECT_EQ(d["shm_exists_after"], false) << name;
      EXPECT_FALSE(fs::exists("/dev/shm" + d["shm_segment"].get<std::string>())) << name;
    }
  }
  EXPECT_TRUE(variant("spawn-shared-memory")["details"].contains("shm_segment"));
}

}  // namespace
