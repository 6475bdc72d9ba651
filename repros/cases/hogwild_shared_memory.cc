// hogwild-shared-memory (source 000): the A3C design. The model's parameters live in shared
// memory, worker processes train on their own experience and update those parameters in place,
// and the parent sees every update without copying anything back (the source: what a child
// collects is lost when it ends unless it reaches the parent through shared memory).
//
// Here: linear regression on a synthetic data set with a known true weight vector, generated from
// a seed in every process. The parameters (w, b) sit in a POSIX shared memory segment;
// torch::from_blob wraps that memory in each process, so autograd's SGD step writes straight into
// it. Spawned workers each train on their shard, lock-free (Hogwild) or under a cross-process
// lock; the parent evaluates the full-data loss as they go and compares with a single-process run.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/shared_memory.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/detail_views.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace hogwild_shared_memory {

using fc::Outcome;
using nlohmann::json;

using fc::cases::monotonic_s;

constexpr int kWorkers = 2;
constexpr int64_t kRows = 2048, kFeatures = 8, kBatch = 32;
constexpr int kStepsPerWorker = 300;
constexpr double kLr = 0.02, kNoise = 0.1, kTrueBias = 0.5;
constexpr uint64_t kSeed = 20251209;
constexpr double kClearlyBelow = 0.05;  // final loss at most 5% of the initial one
constexpr double kTolerance = 0.25;     // and within 25% of the single-process run's final loss

// The segment every process maps. Zero-filled pages are valid zeros for the atomics and params.
struct Shared {
  fc::cases::ProcessMutex lock;      // guards the update in the `spawn-locked` variant
  std::atomic<int> ready, go, done;  // start barrier and end count
  std::atomic<long long> steps;      // SGD steps applied by all workers together
  float params[kFeatures + 1];       // w, then b
};
static_assert(std::atomic<long long>::is_always_lock_free, "atomics must work across processes");

struct Data {
  torch::Tensor x, y;
};

// The same data set in every process: a seeded generator, not a payload.
Data make_data() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  auto x = torch::randn({kRows, kFeatures}, gen);
  auto w = torch::randn({kFeatures}, gen);
  auto y = x.mv(w) + kTrueBias + kNoise * torch::randn({kRows}, gen);
  return {x, y};
}

torch::Tensor loss_of(const torch::Tensor& p, const torch::Tensor& x, const torch::Tensor& y) {
  return torch::mse_loss(x.mv(p.narrow(0, 0, kFeatures)) + p[kFeatures], y);
}

double full_loss(const Data& d, float* params) {
  torch::NoGradGuard no_grad;
  return loss_of(torch::from_blob(params, {kFeatures + 1}), d.x, d.y).item<double>();
}

// Worker `w`'s k-th minibatch: its shard is rows [w, w+1) * kRows / workers, taken in order.
int64_t batch_row(int w, int k) {
  const int64_t shard = kRows / kWorkers;
  return w * shard + (k * kBatch) % shard;
}

// One SGD step on the minibatch at `row`; `update` applies the optimizer step (perhaps locked).
template <class Update>
double sgd_step(torch::optim::SGD& opt, const torch::Tensor& p, const Data& d, int64_t row,
                Update update) {
  opt.zero_grad();
  auto loss = loss_of(p, d.x.narrow(0, row, kBatch), d.y.narrow(0, row, kBatch));
  loss.backward();
  update([&] { opt.step(); });  // SGD's step writes p in place: into shared memory
  return loss.item<double>();
}

FORKCHECK_WORKER(hogwild_train) {
  const int index = payload.at("index").get<int>();
  // Every variant maps the segment: it also holds the start barrier and the step counter.
  auto seg =
      fc::cases::SharedSegment::open(payload.at("segment").get<std::string>(), sizeof(Shared));
  auto* sh = static_cast<Shared*>(seg.data());
  const bool shared = payload.at("shared").get<bool>(), locked = payload.at("locked").get<bool>();
  // Shared: a view of the segment (no copy). Not shared: this process's own copy of the
  // parameters, as a model handed to a worker without share_memory() would be.
  std::vector<float> own = payload.at("params").get<std::vector<float>>();
  torch::Tensor p = torch::from_blob(shared ? sh->params : own.data(), {kFeatures + 1});
  p.requires_grad_(true);
  torch::optim::SGD opt({p}, torch::optim::SGDOptions(kLr));
  const Data d = make_data();

  sh->ready.fetch_add(1);
  const double deadline = monotonic_s() + 30;
  while (sh->go.load() == 0) {
    if (monotonic_s() > deadline) throw std::runtime_error("the parent never said go");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  double lock_wait = 0;
  auto update = [&](auto step) {
    if (!locked) return step();  // Hogwild: no lock, updates may interleave
    fc::cases::SharedLock lock(&sh->lock, std::chrono::seconds(10));
    lock_wait += lock.waited_s();
    step();
  };
  std::vector<double> losses;  // the worker's minibatch loss every 20 steps
  std::vector<int> loss_steps;
  const double t0 = monotonic_s();
  for (int k = 0; k < kStepsPerWorker; ++k) {
    const double loss = sgd_step(opt, p, d, batch_row(index, k), update);
    sh->steps.fetch_add(1);
    if (k % 20 == 0 || k == kStepsPerWorker - 1) {
      losses.push_back(loss);
      loss_steps.push_back(k);
    }
  }
  const double seconds = monotonic_s() - t0;
  sh->done.fetch_add(1);
  const int64_t shard = kRows / kWorkers;
  torch::NoGradGuard no_grad;
  return {{"pid", fc::launch::current_process_id()},
          {"shard_rows", {index * shard, (index + 1) * shard}},
          {"steps", kStepsPerWorker},
          {"losses", losses},
          {"loss_steps", loss_steps},
          {"own_view_full_loss_at_end", loss_of(p.detach(), d.x, d.y).item<double>()},
          {"training_seconds", seconds},
          {"lock_wait_seconds", lock_wait}};
}

// What the reports show: a row per worker, the loss of the shared parameters as the parent read
// it while they trained (flat when their updates never reach it), and each worker's own loss.
void add_views(json& details, const json& parent_curve) {
  std::vector<json> rows;
  std::vector<fc::detail_views::Series> own;
  for (const auto& w : details["workers"]) {
    const auto status = w.value("status", std::string("?"));
    const json r = w.value("result", json::object());
    const auto losses =
        r.is_object() ? r.value("losses", std::vector<double>{}) : std::vector<double>{};
    rows.push_back(
        fc::detail_views::row({w.value("index", 0), w.value("pid", json()),
                               status == "ok" ? std::string("trained") : w.value("error", status),
                               r.is_object() ? r.value("steps", json()) : json(),
                               losses.empty() ? json() : json(losses.front()),
                               losses.empty() ? json() : json(losses.back()),
                               r.is_object() ? r.value("lock_wait_seconds", json()) : json()},
                              status));
    own.push_back({"worker " + std::to_string(w.value("index", 0)), losses});
  }
  fc::detail_views::add_table(details, "the workers",
                              {"worker", "pid", "result", "steps", "first minibatch loss",
                               "last minibatch loss", "lock wait (s)"},
                              std::move(rows));
  std::vector<double> seen;
  for (const auto& point : parent_curve) seen.push_back(point.at(2).get<double>());
  fc::detail_views::add_chart(details,
                              "full-data loss of the shared parameters, as the parent read it",
                              "the parent's reads, in order", "loss (MSE)", {{"the parent", seen}});
  fc::detail_views::add_chart(details, "each worker's minibatch loss, every 20 steps",
                              "every 20th step, and the last", "loss (MSE)", own);
}

// The same schedule in one process: step j is worker (j % W)'s (j / W)-th minibatch.
json single_process_baseline(const Data& d) {
  auto p = torch::zeros({kFeatures + 1}).requires_grad_(true);
  torch::optim::SGD opt({p}, torch::optim::SGDOptions(kLr));
  json curve = json::array();
  const int total = kWorkers * kStepsPerWorker;
  for (int j = 0; j < total; ++j) {
    sgd_step(opt, p, d, batch_row(j % kWorkers, j / kWorkers), [](auto step) { step(); });
    if (j % 20 == 0 || j == total - 1) {
      torch::NoGradGuard no_grad;
      curve.push_back({j + 1, loss_of(p, d.x, d.y).item<double>()});
    }
  }
  return {{"steps", total},
          {"final_loss", curve.back()[1]},
          {"full_loss_curve", curve},
          {"full_loss_curve_columns", {"steps", "full_data_loss"}}};
}

// The least-squares optimum: the floor any run can reach (about kNoise^2).
double optimal_loss(const Data& d) {
  auto a = torch::cat({d.x, torch::ones({kRows, 1})}, 1);
  auto sol = at::linalg_solve(a.t().mm(a), a.t().mv(d.y));
  return loss_of(sol, d.x, d.y).item<double>();
}

json thin(const json& curve, size_t at_most) {
  if (curve.size() <= at_most) return curve;
  json out = json::array();
  const size_t stride = (curve.size() + at_most - 1) / at_most;
  for (size_t i = 0; i < curve.size(); i += stride) out.push_back(curve[i]);
  if (out.back() != curve.back()) out.push_back(curve.back());
  return out;
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool shared = variant.name != "private-copy", locked = variant.name == "spawn-locked";
  auto seg = fc::cases::SharedSegment::create("hogwild", sizeof(Shared));  // unlinked on every path
  fc::cases::remove_segment_on_termination(seg.name());  // SIGTERM runs no destructor
  auto* sh = new (seg.data()) Shared();
  fc::cases::init_process_shared_mutex(&sh->lock);
  const Data d = make_data();

  json details;
  details["plan"] = {{"workers", kWorkers},
                     {"rows", kRows},
                     {"features", kFeatures},
                     {"batch", kBatch},
                     {"steps_per_worker", kStepsPerWorker},
                     {"lr", kLr},
                     {"noise_sd", kNoise},
                     {"seed", kSeed},
                     {"shared_parameters", shared},
                     {"update_lock", locked ? fc::cases::process_mutex_kind() : "none (Hogwild)"}};
  details["shm_segment"] = seg.name();
  const double initial = full_loss(d, sh->params);
  details["initial_loss"] = initial;
  details["optimal_loss"] = optimal_loss(d);
  fc::channel::send_details(details);

  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i)
    payloads.push_back({{"index", i},
                        {"segment", seg.name()},
                        {"shared", shared},
                        {"locked", locked},
                        {"params", std::vector<float>(sh->params, sh->params + kFeatures + 1)}});
  auto workers = fc::start_pool(variant, "hogwild_train", payloads);
  details["single_process"] = single_process_baseline(d);  // while the workers start up

  auto any_ended = [&] {
    for (auto& w : workers)
      if (w.join(std::chrono::milliseconds(0))) return true;
    return false;
  };
  const double ready_by = monotonic_s() + 30;
  while (sh->ready.load() < kWorkers && !any_ended() && monotonic_s() < ready_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  seg.unlink();  // every worker has mapped it (or failed): the name is no longer needed
  details["shm_unlinked_before_training"] = sh->ready.load() == kWorkers;

  // The parent's view while the workers train: [ms since go, steps applied, full-data loss].
  json curve = json::array();
  const double t0 = monotonic_s();
  sh->go.store(1);
  while (sh->done.load() < kWorkers && monotonic_s() < t0 + 20 && !any_ended()) {
    curve.push_back({(monotonic_s() - t0) * 1e3, sh->steps.load(), full_loss(d, sh->params)});
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  auto r = fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
  const double final_loss = full_loss(d, sh->params);
  curve.push_back({(monotonic_s() - t0) * 1e3, sh->steps.load(), final_loss});
  r.details["parent_loss_curve"] = thin(curve, 60);
  r.details["parent_loss_curve_columns"] = {"ms_since_go", "steps_applied", "full_data_loss"};
  r.details["parent_evaluations"] = curve.size();
  r.details["final_loss"] = final_loss;
  r.details["steps_applied"] = sh->steps.load();
  r.details["shm_exists_after"] = fc::cases::shm_exists(seg.name());
  add_views(r.details, r.details["parent_loss_curve"]);
  if (r.outcome != Outcome::kOk) return r;

  const double baseline = r.details["single_process"]["final_loss"].get<double>();
  const bool went_down = final_loss <= kClearlyBelow * initial;
  const bool close = std::abs(final_loss - baseline) <= kTolerance * baseline;
  r.details["tolerance"] = {{"final_at_most_fraction_of_initial", kClearlyBelow},
                            {"relative_to_single_process", kTolerance}};
  r.details["went_down"] = went_down;
  r.details["close_to_single_process"] = close;
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "the parent's full-data loss went %.4g -> %.4g with %d workers %s (single "
                "process: %.4g, least-squares optimum %.4g)",
                initial, final_loss, kWorkers,
                !shared  ? "training private copies"
                : locked ? "updating shared parameters under a lock"
                         : "updating shared parameters lock-free",
                baseline, details["optimal_loss"].get<double>());
  r.message = msg;
  if (!went_down) {
    r.outcome = Outcome::kError;
    r.message += ": it did not go down to 5% of the initial loss";
    if (!shared) r.message += "; the workers' updates never reached the parent";
  } else if (!close) {
    r.outcome = Outcome::kError;
    r.message += ": not within 25% of the single-process run";
  }
  return r;
}

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> all = {
      fc::fix("spawn", "spawn",
              "each spawned worker maps the segment by name; torch::from_blob views it without a "
              "copy, so every SGD step lands in the parameters the parent evaluates",
              "2 spawned workers, lock-free (Hogwild) updates of shared parameters"),
      fc::fix("spawn-locked", "spawn",
              "as `spawn`; a cross-process lock in the segment serialises the updates (a robust "
              "mutex on Linux; details.plan.update_lock names it)",
              "2 spawned workers, each optimizer step under a cross-process lock"),
      fc::fix("forkserver", "forkserver",
              "workers forked by the server map the segment by name just as spawned ones do",
              "as `spawn`, workers forked by the forkserver"),
      // Under forkserver: the copy is the payload's whichever way the worker starts, and a worker
      // forked by the server costs no libtorch start-up of its own (one for the server).
      fc::hazard("private-copy", "forkserver", Outcome::kError,
                 "without shared memory a worker gets a copy of the parameters (a model pickled "
                 "to a spawned or forkserver worker, or copy-on-write pages under fork): its own "
                 "loss goes down, the parent's never moves",
                 "as `forkserver`, but the parameters travel in the payload instead of the "
                 "segment"),
  };
  return all;
}

FORKCHECK_CASE(hogwild_shared_memory_case) {
  fc::CaseDef c;
  c.id = "hogwild-shared-memory";
  c.title = "Workers train parameters that live in shared memory (A3C / Hogwild)";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "An A3C agent runs each bot in a child process; what a child collects is lost when it is "
      "terminated unless it reaches the parent, so gradients are shared through shared memory "
      "(model.share_memory()) and the shared model is updated; under fork, backward() in the "
      "children failed, and the workers were started with spawn.";
  c.mechanism =
      "Parameters in a shared mapping are the same physical pages in every process; "
      "torch::from_blob makes a tensor over them without copying, and SGD's in-place step "
      "updates them for everyone. A spawned worker cannot inherit a mapping, so it opens the "
      "segment by name (shm_open; Windows: a named file mapping), as torch.multiprocessing does "
      "with its shared-memory files.";
  c.platforms = "all (POSIX shm_open + mmap; Windows named file mappings)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"shm", "torch-threads", "cpus", "libtorch", "start-methods"};
  return c;
}

}  // namespace hogwild_shared_memory
}  // namespace
