// selfplay-pipeline (source 001, dlshogi): self-play data generation in several processes.
// The source shared a TorchScript model with share_memory() and it failed, so each worker loads
// the model file itself; inference contends (on a GPU there), so it runs under a cross-process
// lock; and the records go through a queue to ONE writer process, so that counting them (and
// measuring the rate) is easy. The source starts its workers with spawn, as CUDA wants.
//
// Here: a small policy/value network built and saved as TorchScript in C++ (Module::define),
// spawned actors each torch::jit::load it, run batched inference under a process-shared mutex,
// and send records over a queue (record_queue.h: loopback TCP, one connection per actor, the
// writer's port published in a file) to a writer process that writes them to a file.
// Round 1 runs 1 actor, round 2 runs 2: records per second for both are measured. Under fork,
// after the parent ran the model with 2 intra-op threads, the actor's first forward hangs in
// libgomp (the mechanism of torch-omp-pool-hang).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "cases/record_queue.h"
#include "cases/shared_memory.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/launch.h"
#include "launch/process.h"

namespace {

using fc::Outcome;
using nlohmann::json;

namespace fs = std::filesystem;
namespace queue = fc::cases::record_queue;
using fc::cases::monotonic_s;

// A batch of 256 positions makes 256x256 hidden activations: 65536 elements, above ATen's
// parallel grain of 32768, so the bias add and relu go parallel whenever there are 2 threads.
constexpr int64_t kFeatures = 64, kHidden = 256, kMoves = 32, kBatch = 256;
constexpr int kBatchesPerActor = 12;
constexpr int kRoundActors[] = {1, 2};  // actors per round: records/second with 1 and with 2
constexpr int kActors = kRoundActors[0] + kRoundActors[1];
constexpr int kParentThreads = 2;

// Every process starts at once (libtorch loads in parallel); the rounds then run one after the
// other, each with its actors side by side, so each round's rate is measured undisturbed.
struct Shared {
  fc::cases::ProcessMutex inference;  // one forward at a time across processes (the source's GPU)
  std::atomic<int> loaded;      // actors that loaded the model and ran their first forward
  std::atomic<int> ready[3];    // per round: actors at the round's start line
  std::atomic<int> finished[3]; // per round: actors done
};

void wait_until(const std::atomic<int>& v, int at_least, const char* what) {
  const double deadline = monotonic_s() + 20;
  while (v.load() < at_least) {
    if (monotonic_s() > deadline) throw std::runtime_error(std::string("waited 20 s for ") + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // light on a shared machine
  }
}

const char* kForward = R"JIT(
def forward(self, x):
    h = torch.relu(torch.matmul(x, self.w1) + self.b1)
    policy = torch.matmul(h, self.wp) + self.bp
    value = torch.tanh(torch.matmul(h, self.wv) + self.bv)
    return policy, value
)JIT";

void save_model(const std::string& path) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  torch::jit::Module m("SelfPlayNet");
  auto init = [&](int64_t in, int64_t out) {
    return torch::randn({in, out}, gen) / std::sqrt(static_cast<double>(in));
  };
  m.register_parameter("w1", init(kFeatures, kHidden), false);
  m.register_parameter("b1", torch::zeros({kHidden}), false);
  m.register_parameter("wp", init(kHidden, kMoves), false);
  m.register_parameter("bp", torch::zeros({kMoves}), false);
  m.register_parameter("wv", init(kHidden, 1), false);
  m.register_parameter("bv", torch::zeros({1}), false);
  m.define(kForward);
  m.save(path);
}

std::pair<torch::Tensor, torch::Tensor> forward(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  auto out = m.forward({x}).toTuple();
  return {out->elements()[0].toTensor(), out->elements()[1].toTensor()};
}

FORKCHECK_WORKER(selfplay_actor) {
  const int round = payload.at("round").get<int>(), index = payload.at("index").get<int>();
  const int actors = payload.at("actors").get<int>();
  auto seg = fc::cases::SharedSegment::open(payload.at("segment").get<std::string>(), sizeof(Shared));
  auto* sh = static_cast<Shared*>(seg.data());
  auto model = torch::jit::load(payload.at("model").get<std::string>());  // each loads its own
  model.eval();
  // The writer is started with the actors: this waits (20 s at most) for its port, then connects.
  queue::Sender records(payload.at("queue").get<std::string>());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(100 * round + index));

  // The first forward: where a fork child of the parallel parent hangs (announced to the harness).
  {
    auto x = torch::rand({kBatch, kFeatures}, gen);
    fc::cases::SharedLock lock(&sh->inference, std::chrono::seconds(10));
    char step[160];
    std::snprintf(step, sizeof step,
                  "the actor's first TorchScript forward of a 256-position batch (%d intra-op threads)",
                  at::get_num_threads());
    fc::channel::step_begin(step);
    forward(model, x);
    fc::channel::step_end(step);
  }
  sh->loaded.fetch_add(1);
  wait_until(sh->loaded, kActors, "every actor to load the model");
  if (round > 1) wait_until(sh->finished[round - 1], kRoundActors[round - 2], "the previous round");
  sh->ready[round].fetch_add(1);
  wait_until(sh->ready[round], actors, "the round's other actors");

  double lock_wait = 0, inference = 0;
  long sent = 0;
  const double t_start = monotonic_s();
  for (int ply = 0; ply < kBatchesPerActor; ++ply) {
    auto x = torch::rand({kBatch, kFeatures}, gen);  // stands in for the positions' features
    std::pair<torch::Tensor, torch::Tensor> out;
    {
      fc::cases::SharedLock lock(&sh->inference, std::chrono::seconds(10));
      lock_wait += lock.waited_s();
      const double t = monotonic_s();
      out = forward(model, x);
      inference += monotonic_s() - t;
    }
    auto moves = out.first.argmax(1);
    auto values = out.second.reshape({kBatch});
    const auto* mv = moves.data_ptr<int64_t>();
    const auto* v = values.data_ptr<float>();
    // One record per position: round actor game ply move value.
    std::string m = "R " + std::to_string(round) + " " + std::to_string(index) + " " +
                    std::to_string(kBatch) + "\n";
    char line[96];
    for (int64_t g = 0; g < kBatch; ++g) {
      std::snprintf(line, sizeof line, "%d %d %lld %d %lld %.4f\n", round, index,
                    static_cast<long long>(g), ply, static_cast<long long>(mv[g]),
                    static_cast<double>(v[g]));
      m += line;
    }
    records.send(m);  // one message: never mixed with another actor's; a full queue blocks
    sent += kBatch;
  }
  const double t_end = monotonic_s();
  sh->finished[round].fetch_add(1);
  records.send("E " + std::to_string(round) + " " + std::to_string(index) + " " +
               std::to_string(sent) + "\n");
  records.close();  // this actor's end: the writer stops once every actor's end came
  return {{"pid", fc::launch::current_process_id()}, {"round", round}, {"actor", index}, {"sent", sent},
          {"t_start", t_start}, {"t_end", t_end},
          {"records_per_second", static_cast<double>(sent) / (t_end - t_start)},
          {"lock_wait_seconds", lock_wait}, {"inference_seconds", inference},
          {"intra_op_threads", at::get_num_threads()}};
}

// The one writer: receives every actor's records, counts them per actor, writes them to a file.
// It listens before it publishes its port, so no actor's connection is refused; it gives up after
// 20 s without a byte from any actor (saying how many ended), and at once when an actor's
// connection drops in the middle of a message.
FORKCHECK_WORKER(selfplay_writer) {
  queue::Writer records(payload.at("queue").get<std::string>(), payload.at("actors").get<int>(),
                        std::chrono::seconds(20));
  std::ofstream out(payload.at("records").get<std::string>());
  std::map<std::string, long> received, claimed;
  long written = 0;
  std::string m;
  while (records.next(m)) {
    char kind = 0;
    int round = 0, actor = 0;
    long count = 0;
    if (std::sscanf(m.c_str(), "%c %d %d %ld", &kind, &round, &actor, &count) != 4)
      throw std::runtime_error("bad message: " + m.substr(0, 40));
    const std::string key = std::to_string(round) + "/" + std::to_string(actor);
    if (kind == 'E') {
      claimed[key] = count;
      continue;
    }
    const std::string body = m.substr(m.find('\n') + 1);
    const long lines = static_cast<long>(std::count(body.begin(), body.end(), '\n'));
    out << body;
    received[key] += lines;
    written += lines;
  }
  out.close();
  return {{"pid", fc::launch::current_process_id()}, {"received", received}, {"claimed", claimed}, {"written", written}};
}

// The case's scratch directory (model, the writer's port file, records), removed on every way
// out. Its name is new: create_directory fails on one that exists, as mkdtemp would, on every OS.
struct TempDir {
  fs::path path;
  TempDir() {
    const fs::path base = fs::temp_directory_path();
    const auto salt = static_cast<unsigned long long>(
        std::chrono::steady_clock::now().time_since_epoch().count());
    for (unsigned attempt = 0; attempt < 100; ++attempt) {
      char name[80];
      std::snprintf(name, sizeof name, "forkcheck-selfplay-%lld-%llx",
                    static_cast<long long>(fc::launch::current_process_id()), salt + attempt);
      std::error_code ec;
      if (fs::create_directory(base / name, ec)) {
        path = base / name;
        fs::permissions(path, fs::perms::owner_all, ec);  // mkdtemp's 0700 (POSIX)
        return;
      }
      if (ec) throw std::system_error(ec, "create " + (base / name).string());
    }
    throw std::runtime_error("no new scratch directory in " + base.string() + " after 100 names");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

fc::CaseResult run(const fc::VariantSpec& variant) {
  TempDir dir;
  const std::string model_path = (dir.path / "model.pt").string();
  const std::string queue_path = (dir.path / "queue.port").string();  // the writer's port
  const std::string records_path = (dir.path / "records.txt").string();
  auto seg = fc::cases::SharedSegment::create("selfplay", sizeof(Shared));
  // A hung variant is ended by SIGTERM, which runs no destructor: leave nothing behind then either.
  fc::cases::remove_segment_on_termination(seg.name());
  // (queue_path + ".tmp": the port file written aside, before the writer renames it.)
  for (const auto& p :
       {model_path, queue_path, queue_path + ".tmp", records_path, dir.path.string()})
    fc::cases::remove_on_termination(p);
  auto* sh = new (seg.data()) Shared();
  fc::cases::init_process_shared_mutex(&sh->inference);

  json details;
  details["scratch_dir"] = dir.path.string();
  details["shm_segment"] = seg.name();
  save_model(model_path);
  details["model"] = {{"format", "TorchScript, built with torch::jit::Module::define and saved"},
                      {"input", {kBatch, kFeatures}}, {"hidden", kHidden}, {"policy", kMoves}};
  // The parent uses the model too, with 2 intra-op threads: big enough to enter OpenMP.
  torch::set_num_threads(kParentThreads);
  auto model = torch::jit::load(model_path);
  model.eval();
  const int before = fc::launch::thread_count();
  forward(model, torch::rand({kBatch, kFeatures}));
  const int after = fc::launch::thread_count();
  details["parent_forward"] = {{"intra_op_threads", at::get_num_threads()},
                               {"threads_before", before}, {"threads_after", after},
                               {"went_parallel", after > before}};
  fc::channel::send_details(details);

  fc::launch::Launcher launcher(fc::start_method_of(variant));
  std::vector<fc::launch::Worker> writer;
  writer.push_back(launcher.start("selfplay_writer", {{"queue", queue_path},
                                                     {"records", records_path},
                                                     {"actors", kActors}}));
  details["writer_pid"] = writer.front().pid();
  std::vector<json> payloads;
  for (int r = 0; r < static_cast<int>(std::size(kRoundActors)); ++r)
    for (int i = 0; i < kRoundActors[r]; ++i)
      payloads.push_back({{"round", r + 1}, {"index", i}, {"actors", kRoundActors[r]},
                          {"model", model_path}, {"queue", queue_path}, {"segment", seg.name()}});
  auto actors = fc::start_pool(variant, "selfplay_actor", payloads);
  auto pool = fc::join_pool(actors, std::chrono::seconds(30));
  if (pool.outcome != Outcome::kOk)
    return fc::to_case_result(std::move(pool), details);  // the writer is killed with `writer`

  json rounds = json::array();
  for (int r = 0; r < static_cast<int>(std::size(kRoundActors)); ++r) {
    json round = {{"actors", kRoundActors[r]}, {"workers", json::array()}};
    double t0 = 1e300, t1 = 0, inference = 0;
    long records = 0;
    for (const auto& w : pool.workers) {
      if (w["result"]["round"] != r + 1) continue;
      round["workers"].push_back(w);
      t0 = std::min(t0, w["result"]["t_start"].get<double>());
      t1 = std::max(t1, w["result"]["t_end"].get<double>());
      records += w["result"]["sent"].get<long>();
      inference += w["result"]["inference_seconds"].get<double>();
    }
    round["records"] = records;
    round["seconds"] = t1 - t0;  // first actor's start to last actor's end
    round["records_per_second"] = static_cast<double>(records) / (t1 - t0);
    // Inference is serialised by the lock: its share of the round says what bounds the rate.
    round["inference_share_of_round"] = inference / (t1 - t0);
    rounds.push_back(round);
  }
  details["rounds"] = rounds;
  auto w = fc::join_pool(writer, std::chrono::seconds(20));
  details["writer"] = w.workers.front();
  if (w.outcome != Outcome::kOk) {
    w.message = "the writer: " + w.message;
    return fc::to_case_result(std::move(w), details);
  }

  // Do the counts add up? Every actor's sent == what the writer received and was told.
  const json& wr = w.workers.front()["result"];
  long sent_total = 0;
  std::string mismatch;
  for (const auto& round : rounds)
    for (const auto& a : round["workers"]) {
      const auto& res = a["result"];
      const std::string key = std::to_string(res["round"].get<int>()) + "/" +
                              std::to_string(res["actor"].get<int>());
      const long sent = res["sent"].get<long>();
      sent_total += sent;
      if (wr["received"].value(key, -1L) != sent || wr["claimed"].value(key, -1L) != sent)
        mismatch += " actor " + key + " sent " + std::to_string(sent) + ", writer received " +
                    std::to_string(wr["received"].value(key, -1L)) + ";";
    }
  std::ifstream in(records_path);
  const long lines = static_cast<long>(std::count(std::istreambuf_iterator<char>(in),
                                                  std::istreambuf_iterator<char>(), '\n'));
  const long expected = static_cast<long>(kActors) * kBatchesPerActor * kBatch;
  details["counts"] = {{"expected", expected}, {"sent", sent_total},
                       {"written_by_writer", wr["written"]}, {"lines_in_file", lines},
                       {"add_up", mismatch.empty() && sent_total == expected &&
                                      wr["written"].get<long>() == expected && lines == expected}};
  fc::CaseResult result{Outcome::kOk, "", details};
  if (!details["counts"]["add_up"].get<bool>()) {
    result.outcome = Outcome::kError;
    result.message = "the counts do not add up: expected " + std::to_string(expected) +
                     ", sent " + std::to_string(sent_total) + ", file has " +
                     std::to_string(lines) + " lines;" + mismatch;
    return result;
  }
  char msg[300];
  std::snprintf(msg, sizeof msg,
                "%d actors sent %ld records to one writer, which wrote all %ld; %.0f records/s "
                "with 1 actor, %.0f with 2 (locked inference takes %.0f%% of a 1-actor round)",
                kActors, sent_total, lines, rounds[0]["records_per_second"].get<double>(),
                rounds[1]["records_per_second"].get<double>(),
                100 * rounds[0]["inference_share_of_round"].get<double>());
  result.message = msg;
  return result;
}

std::vector<fc::VariantSpec> variants() {
  const bool omp = at::hasOpenMP();
  auto fork = fc::hazard(
      "fork", "fork", Outcome::kHang,
      "the parent's forward with 2 intra-op threads ran its 256x256 bias add and relu in an "
      "OpenMP region, so libgomp's pool exists at fork; the fork child's first forward starts a "
      "2-thread region that waits for pool threads fork() did not copy",
      "same parent; actors and writer fork-started");
  if (!omp) fork.skip("this libtorch was built without OpenMP: there is no libgomp pool to inherit");
  std::vector<fc::VariantSpec> all = {
      fc::fix("spawn", "spawn",
              "each actor is a fresh exec that loads the TorchScript file itself: no model "
              "shared between processes, no libgomp state inherited",
              "writer + 1 actor, then 2 actors; each actor loads the model, infers under the lock"),
      fc::fix("forkserver", "forkserver",
              "actors forked by a server started before the parent touched torch load the model "
              "themselves, with no libgomp pool inherited",
              "as `spawn`, processes forked by the forkserver"),
      fork,
  };
  return all;
}

}  // namespace

FORKCHECK_CASE(selfplay_pipeline_case) {
  fc::CaseDef c;
  c.id = "selfplay-pipeline";
  c.title = "Self-play actors with their own TorchScript model, a shared inference lock, one writer";
  c.source_title = "Gumbel dlshogiを作る その5(マルチプロセス対応)";
  c.source_author = "TadaoYamaoka";
  c.source_doc = "001";
  c.reported =
      "torch.multiprocessing with model.share_memory() failed with a TorchScript model, so each "
      "process loads the model itself; GPU inference slows down when processes compete, so it "
      "runs under a lock; one writer process fed through multiprocessing.Manager().Queue() "
      "counts and writes the records; spawn is used because fork is trouble with CUDA. The rate "
      "grew almost linearly with 2 to 16 processes.";
  c.mechanism =
      "A spawned actor shares nothing with the parent: it loads the model file and opens the "
      "lock and the queue by name (a shared memory segment holding a process-shared mutex, a "
      "loopback TCP socket the writer listens on, its port published in a file). Under fork the "
      "actor also inherits the parent's libgomp pool bookkeeping; once the parent ran a parallel "
      "op, the child's first parallel op waits forever.";
  c.platforms =
      "all (Windows: spawn only, as everywhere there); the fork hang needs a libtorch with libgomp "
      "(Debian's)";
  c.variants = &variants;
  c.run = &run;
  return c;
}
