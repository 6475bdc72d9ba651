// selfplay-pipeline (source 001, dlshogi): self-play data generation in several processes. The
// source tried torch.multiprocessing with model.share_memory() and found that a TorchScript
// model cannot be shared that way (torchscript-pickle-spawn shows why), so each worker loads the
// model file itself; inference runs under a cross-process lock (on a GPU there); the records go
// through a queue to ONE writer process, so that counting them and measuring the rate is easy.
//
// Here the model is a real TorchScript module (support/scripted_net.h):
//   spawn, forkserver      the source's pipeline: the parent saves the module (Module::save), each
//                          actor torch::jit::load()s it, infers under the lock, and sends records
//                          over a queue (support/record_queue.h: loopback TCP) to one writer
//                          process (support/selfplay_writer.cc: no torch; spawned, it is the
//                          native program).
//   fork-inherited-module  the same pipeline fork-started, the actors using the parent's module
//                          object itself: nothing is serialized, so it works (as in Python). The
//                          parent runs no forward before the fork: what a parallel op before fork
//                          does to a fork child is torch-omp-pool-hang's.
// Every actor's first forward runs a fixed probe batch; its output must match the parent's.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/record_queue.h"
#include "cases/support/scratch_dir.h"
#include "cases/support/scripted_net.h"
#include "cases/support/shared_memory.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/environment.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace selfplay_pipeline {

using fc::Outcome;
using nlohmann::json;

namespace fs = std::filesystem;
namespace queue = fc::cases::record_queue;
namespace net = fc::cases::scripted_net;
using fc::cases::monotonic_s;
using net::kBatch;
using net::kFeatures;

constexpr int kActors = 2;  // on 2 cores: the writer and 2 actors
constexpr int kBatchesPerActor = 12;
constexpr const char* kInherited = "fork-inherited-module";

struct Shared {
  fc::cases::ProcessMutex inference;  // one forward at a time across processes (the source's GPU)
  std::atomic<int> inside;            // actors inside a locked forward right now
  std::atomic<int> most_inside;       // the most seen at once: 1 while the lock serialises
};

// The parent's module; a fork child has it too (fork-inherited-module), a spawned one does not.
torch::jit::Module* g_parent_model = nullptr;

FORKCHECK_WORKER(selfplay_actor) {
  const int index = payload.at("index").get<int>();
  auto seg =
      fc::cases::SharedSegment::open(payload.at("segment").get<std::string>(), sizeof(Shared));
  auto* sh = static_cast<Shared*>(seg.data());
  std::optional<torch::jit::Module> loaded;
  torch::jit::Module* model = g_parent_model;
  std::string model_source = "the parent's module object, inherited through fork";
  if (payload.contains("model")) {  // the source's fix: each worker loads the file itself
    loaded = torch::jit::load(payload.at("model").get<std::string>());
    loaded->eval();
    model = &*loaded;
    model_source = "torch::jit::load of the file the parent saved";
  } else if (!model) {
    throw std::runtime_error("this process has no parent's module: it was not forked from it");
  }
  // The writer is started with the actors: this waits (20 s at most) for its port, then connects.
  queue::Sender records(payload.at("queue").get<std::string>());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(100 + index));

  double lock_wait = 0, inference = 0, probe = 0;
  long sent = 0;
  auto locked_forward = [&](const torch::Tensor& x, bool first) {
    fc::cases::SharedLock lock(&sh->inference, std::chrono::seconds(10));
    lock_wait += lock.waited_s();
    const int now = sh->inside.fetch_add(1) + 1;
    for (int most = sh->most_inside.load(); now > most;)
      if (sh->most_inside.compare_exchange_weak(most, now)) break;
    const double t = monotonic_s();
    std::pair<torch::Tensor, torch::Tensor> out;
    if (first) {  // where a fork child of a parallel parent hangs: announced to the harness
      char step[160];
      std::snprintf(step, sizeof step,
                    "the actor's first TorchScript forward of a 256-position batch (%d intra-op "
                    "threads)",
                    at::get_num_threads());
      fc::channel::step_begin(step);
      out = net::forward(*model, x);
      fc::channel::step_end(step);
    } else {
      out = net::forward(*model, x);
    }
    inference += monotonic_s() - t;
    sh->inside.fetch_sub(1);
    return out;
  };
  {
    auto out = locked_forward(net::probe_input(), true);
    probe = out.first.sum().item<double>() + out.second.sum().item<double>();
  }
  const double t_start = monotonic_s();
  for (int ply = 0; ply < kBatchesPerActor; ++ply) {
    auto out = locked_forward(torch::rand({kBatch, kFeatures}, gen), false);  // positions' features
    auto moves = out.first.argmax(1);
    auto values = out.second.reshape({kBatch});
    const auto* mv = moves.data_ptr<int64_t>();
    const auto* v = values.data_ptr<float>();
    // One record per position: actor game ply move value.
    std::string m = "R " + std::to_string(index) + " " + std::to_string(kBatch) + "\n";
    char line[96];
    for (int64_t g = 0; g < kBatch; ++g) {
      std::snprintf(line, sizeof line, "%d %lld %d %lld %.4f\n", index, static_cast<long long>(g),
                    ply, static_cast<long long>(mv[g]), static_cast<double>(v[g]));
      m += line;
    }
    records.send(m);  // one message: never mixed with another actor's; a full queue blocks
    sent += kBatch;
  }
  const double t_end = monotonic_s();
  records.send("E " + std::to_string(index) + " " + std::to_string(sent) + "\n");
  records.close();  // this actor's end: the writer stops once every actor's end came
  return {{"pid", fc::launch::current_process_id()},
          {"actor", index},
          {"model_source", model_source},
          {"probe_checksum", probe},
          {"sent", sent},
          {"seconds", t_end - t_start},
          {"lock_wait_seconds", lock_wait},
          {"inference_seconds", inference},
          {"intra_op_threads", at::get_num_threads()},
          {"omp_max_threads", fc::omp_max_threads()}};
}

// The native repro program beside this one (it has the writer too), or "" when it is not there.
std::string native_program_beside() {
  const fs::path self = fs::u8path(fc::launch::self_executable_path());
  if (self.empty()) return "";
  const fs::path native = self.parent_path() / ("forkcheck-repro" + self.extension().string());
  std::error_code ec;
  return fs::is_regular_file(native, ec) ? native.string() : "";
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool inherited = variant.name == kInherited;
  const fc::cases::ScratchDir dir("selfplay");
  const std::string model_path = dir.file("model.pt");
  const std::string queue_path = dir.file("queue.port");  // the writer's port
  const std::string records_path = dir.file("records.txt");
  auto seg = fc::cases::SharedSegment::create("selfplay", sizeof(Shared));
  // A hung variant is ended by SIGTERM, which runs no destructor: leave nothing behind then either.
  fc::cases::remove_segment_on_termination(seg.name());
  // (queue_path + ".tmp": the port file written aside, before the writer renames it.)
  for (const auto& p :
       {model_path, queue_path, queue_path + ".tmp", records_path, dir.path().string()})
    fc::cases::remove_on_termination(p);
  auto* sh = new (seg.data()) Shared();
  fc::cases::init_process_shared_mutex(&sh->inference);

  json details;
  details["scratch_dir"] = dir.path().string();
  details["shm_segment"] = seg.name();
  auto model = net::build();
  details["model"] = {
      {"class", model.type()->name()->qualifiedName()},
      {"format", "TorchScript: torch::jit::Module with forward from Module::define"},
      {"input", {kBatch, kFeatures}},
      {"hidden", net::kHidden},
      {"policy", net::kMoves}};
  // (Named thread_counts: the harness may add a generic `threads` record of its own.)
  details["thread_counts"] = {{"intra_op", at::get_num_threads()},
                              {"omp_max_threads", fc::omp_max_threads()},
                              {"openmp_runtime", fc::openmp_runtime().path}};

  if (inherited) {
    g_parent_model = &model;  // the actors use this very object: fork copies it
  } else {
    model.save(model_path);  // the actors load it, as the source's workers do
  }
  details["parent_threads_at_start"] = fc::launch::thread_count();
  fc::channel::send_details(details);

  fc::launch::Launcher launcher(fc::start_method_of(variant));
  // The writer (selfplay_writer.cc) uses no torch: spawned, it is the native program when that is
  // beside this one, and so does not load libtorch only to count lines.
  if (launcher.method() == fc::launch::StartMethod::kSpawn) {
    const std::string native = native_program_beside();
    if (!native.empty()) launcher.spawn_program(native);
    details["writer_program"] = native.empty() ? fc::launch::self_executable_path() : native;
  }
  std::vector<fc::launch::Worker> writer;
  writer.push_back(launcher.start(
      "selfplay_writer", {{"queue", queue_path}, {"records", records_path}, {"actors", kActors}}));
  details["writer_pid"] = writer.front().pid();
  std::vector<json> payloads;
  for (int i = 0; i < kActors; ++i) {
    json p = {{"index", i}, {"queue", queue_path}, {"segment", seg.name()}};
    if (!inherited) p["model"] = model_path;
    payloads.push_back(p);
  }
  auto actors = fc::start_pool(variant, "selfplay_actor", payloads);
  auto pool = fc::join_pool(actors, std::chrono::seconds(30));
  g_parent_model = nullptr;
  if (pool.outcome != Outcome::kOk)
    return fc::to_case_result(std::move(pool), details);  // the writer is killed with `writer`
  details["actors"] = pool.workers;
  details["most_forwards_at_once"] = sh->most_inside.load();
  auto w = fc::join_pool(writer, std::chrono::seconds(20));
  details["writer"] = w.workers.front();
  if (w.outcome != Outcome::kOk) {
    w.message = "the writer: " + w.message;
    return fc::to_case_result(std::move(w), details);
  }
  // After the actors: the parent ran no forward before they started.
  const double reference = net::probe_checksum(model);
  details["parent_probe_checksum"] = reference;

  // Do the counts add up, and did every actor run the parent's model?
  const json& wr = w.workers.front()["result"];
  long sent_total = 0;
  std::string mismatch, wrong_model;
  for (const auto& a : pool.workers) {
    const auto& res = a["result"];
    const std::string key = std::to_string(res["actor"].get<int>());
    const long sent = res["sent"].get<long>();
    sent_total += sent;
    if (wr["received"].value(key, -1L) != sent || wr["claimed"].value(key, -1L) != sent)
      mismatch += " actor " + key + " sent " + std::to_string(sent) + ", writer received " +
                  std::to_string(wr["received"].value(key, -1L)) + ";";
    const double probe = res["probe_checksum"].get<double>();
    if (std::abs(probe - reference) > 1e-5 * std::max(1.0, std::abs(reference)))
      wrong_model += " actor " + key + "'s probe gave " + std::to_string(probe) + ";";
  }
  std::ifstream in(records_path);
  const long lines = static_cast<long>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  const long expected = static_cast<long>(kActors) * kBatchesPerActor * kBatch;
  const double span = wr["last_record_at"].get<double>() - wr["first_record_at"].get<double>();
  details["counts"] = {{"expected", expected},
                       {"sent", sent_total},
                       {"written_by_writer", wr["written"]},
                       {"lines_in_file", lines},
                       {"add_up", mismatch.empty() && sent_total == expected &&
                                      wr["written"].get<long>() == expected && lines == expected}};
  details["writer_rate"] = {
      {"records", wr["written"]},
      {"seconds_first_to_last", span},
      {"records_per_second",
       span > 0 ? static_cast<double>(wr["written"].get<long>()) / span : 0.0}};
  details["probe_matches_parent"] = wrong_model.empty();
  fc::CaseResult result{Outcome::kOk, "", details};
  if (!details["counts"]["add_up"].get<bool>() || !wrong_model.empty()) {
    result.outcome = Outcome::kError;
    result.message = "expected " + std::to_string(expected) + " records, actors sent " +
                     std::to_string(sent_total) + ", the file has " + std::to_string(lines) +
                     " lines;" + mismatch + wrong_model + " the parent's probe gave " +
                     std::to_string(reference);
    return result;
  }
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "%d actors (model: %s) each gave the parent's probe output (%.4f); at most %d "
                "forward at once under the lock; they sent %ld records to one writer, which "
                "wrote all %ld (%.0f records/s from its first to its last)",
                kActors, pool.workers[0]["result"]["model_source"].get<std::string>().c_str(),
                reference, sh->most_inside.load(), sent_total, lines,
                details["writer_rate"]["records_per_second"].get<double>());
  result.message = msg;
  return result;
}

std::vector<fc::VariantSpec> variants() {
  return {
      fc::fix("spawn", "spawn",
              "each actor is a fresh exec that torch::jit::load()s the saved module: the archive "
              "holds the class's code, so the worker compiles it and runs the same weights",
              "the source's pipeline: the parent saves the module; a writer and 2 spawned "
              "actors, each loads the model, infers under a cross-process lock, sends records to "
              "the writer"),
      fc::fix("forkserver", "forkserver",
              "actors forked by a server started before the parent touched torch load the model "
              "themselves, as under spawn",
              "as `spawn`, the writer and actors forked by the forkserver"),
      fc::hazard(kInherited, "fork", Outcome::kOk,
                 "under fork nothing is serialized: the child has the parent's memory, module "
                 "object included, and the parent ran no forward before the fork (so no OpenMP "
                 "team is inherited either: torch-omp-pool-hang shows what one does). With CUDA "
                 "in the parent it would fail as cuda-before-fork does: the source's reason for "
                 "spawn",
                 "the pipeline fork-started, the actors running the parent's module object "
                 "itself (Python: the scripted module as a Process argument under fork works)"),
  };
}

FORKCHECK_CASE(selfplay_pipeline_case) {
  fc::CaseDef c;
  c.id = "selfplay-pipeline";
  c.title =
      "Self-play actors that each load the model, infer under a lock and feed one writer, under "
      "spawn";
  c.source_title = "Gumbel dlshogiを作る その5(マルチプロセス対応)";
  c.source_author = "TadaoYamaoka";
  c.source_doc = "001";
  c.reported =
      "torch.multiprocessing with model.share_memory() would share the parameters, but with a "
      "TorchScript model it failed with an error (torchscript-pickle-spawn), so each process "
      "loads the model itself (one copy per process); GPU inference slows down when processes "
      "compete, so it runs under a lock; one writer process fed through "
      "multiprocessing.Manager().Queue() counts and writes the records; spawn is used explicitly "
      "because fork is said to be trouble with CUDA.";
  c.mechanism =
      "Each actor loads the module from the archive Module::save wrote (it holds the class's "
      "code, which torch::jit::load compiles), so a spawned or forkserver actor runs the parent's "
      "weights without anything of the parent's being serialized but a path. One forward at a "
      "time runs under a cross-process lock; the records of all actors reach one writer through "
      "a queue, which counts them. Under fork the module object is inherited as it is.";
  c.platforms = "all (Windows: spawn only, as everywhere there)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"torch-threads", "cpus", "libtorch", "start-methods"};
  return c;
}

}  // namespace selfplay_pipeline
}  // namespace
