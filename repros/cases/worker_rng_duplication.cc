// worker-rng-duplication (pytorch/pytorch#5059): data-loading workers draw "random" augmentations
// from a process-global generator. The parent seeded it once (numpy seeds its global RandomState
// from OS entropy when it is first imported); fork copies its state into every worker, so every
// worker draws the same sequence. Fixed by seeding each worker from a base seed drawn by the parent
// plus the worker's id (DataLoader's worker_init_fn recipe), or by a start method whose workers
// seed themselves from OS entropy (spawn, forkserver). spawn alone is no fix when the generator's
// seed is a constant (a default-constructed std::mt19937_64; at::CPUGeneratorImpl() without a
// seed): every fresh process then starts from the same state.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace worker_rng_duplication {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 4;
constexpr int kDraws = 8;

// The library's global generator, seeded on first use in each process: from OS entropy (numpy's
// global RandomState, libtorch's default CPU generator) or with a constant default seed.
struct GlobalRng {
  std::mt19937_64 engine;
  bool seeded = false;
  bool constant_default = false;  // the library seeds with its default constant, not entropy
  std::string seeded_with;        // "os-entropy", "constant-default", "base_seed+worker_id"

  std::mt19937_64& get() {
    if (!seeded) {
      if (constant_default) {
        engine.seed(std::mt19937_64::default_seed);
        seeded_with = "constant-default";
      } else {
        std::random_device entropy;
        engine.seed((std::uint64_t{entropy()} << 32) | entropy());
        seeded_with = "os-entropy";
      }
      seeded = true;
    }
    return engine;
  }
  void seed(std::uint64_t s) {
    engine.seed(s);
    seeded = true;
    seeded_with = "base_seed+worker_id";
  }
};
GlobalRng g_rng;

// One augmentation per item: a rotation in [0, 1) turns, from the global generator.
FORKCHECK_WORKER(augment_worker) {
  const int id = payload.at("worker").get<int>();
  const bool inherited = g_rng.seeded;  // fork: the parent's state came along
  if (payload.value("constant_default_seed", false)) g_rng.constant_default = true;
  if (payload.contains("base_seed"))  // worker_init_fn: seed = base_seed + worker_id
    g_rng.seed(payload.at("base_seed").get<std::uint64_t>() + static_cast<std::uint64_t>(id));
  std::uniform_real_distribution<double> turn(0.0, 1.0);
  json draws = json::array();
  for (int i = 0; i < kDraws; ++i) draws.push_back(turn(g_rng.get()));
  return {{"worker", id},
          {"pid", fc::launch::current_process_id()},
          {"generator_state_inherited", inherited},
          {"seeded_with", g_rng.seeded_with},
          {"draws", draws}};
}

std::string four_decimals(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", d);
  return buf;
}

std::string joined(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// Groups the workers by the sequence they drew: which sequences repeat is the finding.
fc::CaseResult judge(fc::PoolResult pool, json details) {
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  std::map<std::vector<double>, std::vector<int>> by_draws;
  std::vector<std::string> seeded_with;
  // Workers whose first draw is the parent's own next one: they carry on the parent's sequence.
  const double parent_next = details.value("parent_next_draw", -1.0);
  int continuing = 0;
  for (const auto& w : pool.workers) {
    const auto& r = w.at("result");
    const auto draws = r.at("draws").get<std::vector<double>>();
    by_draws[draws].push_back(r.at("worker").get<int>());
    seeded_with.push_back(r.at("seeded_with").get<std::string>());
    if (!draws.empty() && draws.front() == parent_next) ++continuing;
  }
  details["workers_continuing_parents_sequence"] = continuing;
  auto values = [](const std::vector<double>& d) {
    std::vector<std::string> s;
    for (double x : d) s.push_back(four_decimals(x));
    return joined(s);
  };
  std::vector<std::string> repeated;
  json groups = json::array();
  for (const auto& [draws, ids] : by_draws) {
    groups.push_back({{"workers", ids}, {"draws", draws}});
    if (ids.size() < 2) continue;
    std::vector<std::string> names;
    for (int id : ids) names.push_back(std::to_string(id));
    repeated.push_back("workers " + joined(names) + " drew the same " +
                       std::to_string(draws.size()) + " values: " + values(draws));
  }
  details["distinct_sequences"] = by_draws.size();
  details["groups"] = groups;
  details["workers_seeded_with"] = seeded_with;
  if (!repeated.empty()) {
    pool.outcome = Outcome::kError;
    pool.message = joined(repeated, "; ") + " (generator seeded with " + seeded_with.front() +
                   (pool.workers.at(0).at("result").value("generator_state_inherited", false)
                        ? ", state inherited from the parent"
                        : "") +
                   ")";
    if (continuing > 0)
      pool.message += "; " + std::to_string(continuing) + " of " +
                      std::to_string(pool.workers.size()) +
                      " carry on the parent's own sequence (its next draw is " +
                      four_decimals(parent_next) + ")";
  } else {
    pool.message = std::to_string(pool.workers.size()) + " workers drew " +
                   std::to_string(by_draws.size()) + " distinct sequences (worker 0: " +
                   values(pool.workers.at(0).at("result").at("draws").get<std::vector<double>>()) +
                   "; seeded with " + seeded_with.front() + ")";
  }
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool constant_default = variant.name.find("constant-seed") != std::string::npos;
  const bool worker_init_fn = variant.name.find("worker-init-fn") != std::string::npos;
  g_rng.constant_default = constant_default;
  // The parent uses the generator before starting workers (shuffling the dataset's order), which
  // seeds it here; a worker_init_fn base seed is drawn from it as DataLoader draws its base_seed.
  std::vector<int> order(kWorkers * kDraws);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::shuffle(order.begin(), order.end(), g_rng.get());
  json details = {{"parent_seeded_with", g_rng.seeded_with}};
  std::vector<json> payloads;
  const std::uint64_t base_seed = g_rng.get()();
  for (int i = 0; i < kWorkers; ++i) {
    json p = {{"worker", i}, {"constant_default_seed", constant_default}};
    if (worker_init_fn) p["base_seed"] = base_seed;
    payloads.push_back(std::move(p));
  }
  if (worker_init_fn) details["base_seed"] = base_seed;
  auto workers = fc::start_pool(variant, "augment_worker", payloads);
  // What the parent draws next: under fork, the workers' first draw is this same value.
  details["parent_next_draw"] = std::uniform_real_distribution<double>(0.0, 1.0)(g_rng.get());
  return judge(fc::join_pool(workers, std::chrono::seconds(20)), std::move(details));
}

std::vector<fc::VariantSpec> variants() {
  return {
      fc::hazard("fork", "fork", Outcome::kError,
                 "fork copies the parent's generator state into every worker and nothing reseeds "
                 "it there (numpy does not reseed at fork; CPython's random module does, through "
                 "os.register_at_fork)",
                 "the parent seeds the global generator from OS entropy and uses it; 4 fork "
                 "workers each draw 8 augmentations from it"),
      fc::fix("fork-worker-init-fn", "fork",
              "each worker reseeds the generator with base_seed + worker_id, base_seed drawn by "
              "the parent (DataLoader's worker seeding, and the worker_init_fn recipe for numpy)",
              "as `fork`, each worker first seeds the generator with base_seed + its id"),
      fc::fix("spawn", "spawn",
              "a fresh exec has an unseeded generator, which seeds itself from OS entropy on first "
              "use (std::random_device): one independent seed per process",
              "same parent; the workers are fresh execs"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent first used the generator: each worker "
              "inherits an unseeded one and seeds it from OS entropy",
              "same parent; the workers are forked by a server started before the generator was "
              "seeded"),
      fc::hazard("spawn-constant-seed", "spawn", Outcome::kError,
                 "the generator's seed is a constant (std::mt19937_64::default_seed; "
                 "at::CPUGeneratorImpl() without a seed uses 67280421310721): every fresh process "
                 "starts from the same state, so spawn alone does not help",
                 "as `spawn`, the library seeds its global generator with its default constant"),
      fc::fix("spawn-constant-seed-worker-init-fn", "spawn",
              "base_seed + worker_id gives each worker its own seed whatever the default is",
              "as `spawn-constant-seed`, each worker first seeds the generator with base_seed + "
              "its id"),
  };
}

FORKCHECK_CASE(worker_rng_duplication_case) {
  fc::CaseDef c;
  c.id = "worker-rng-duplication";
  c.title = "Forked workers inherit one generator state and draw the same random augmentations";
  c.source_title = "np.random generates the same random numbers for each data batch";
  c.source_author = "taoari (pytorch/pytorch#5059)";
  c.source_doc = "";
  c.source_url = "https://github.com/pytorch/pytorch/issues/5059";
  c.reported =
      "A Dataset whose __getitem__ draws with np.random, loaded by a DataLoader with 4 workers: "
      "the numpy values repeat from worker to worker, while those from Python's random module "
      "differ. DataLoader has since seeded torch (#4018) and numpy (#56488) in each worker "
      "(torch 1.13: distinct values); a plain multiprocessing Process under fork still draws the "
      "same numpy and torch values in every worker.";
  c.mechanism =
      "A global generator is plain process memory. fork copies its state into each child, so "
      "every child continues the parent's sequence from the same point. Unless something "
      "reseeds it in the child (an atfork hook, a worker init function), the workers' random "
      "augmentations are identical. A fresh process seeds its own, which helps only when that "
      "seed comes from OS entropy and not from a constant.";
  c.platforms =
      "fork: every POSIX system; the constant-seed variant: every platform (spawn included)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"start-methods"};
  return c;
}

}  // namespace worker_rng_duplication
}  // namespace
