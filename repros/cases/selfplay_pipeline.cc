// selfplay-pipeline (source 001, dlshogi): self-play data generation in several processes. The
// source tried torch.multiprocessing with model.share_memory() and found that a TorchScript
// model cannot be shared that way (it quotes no error; PyTorch 1.13 under spawn raises `Tried to
// serialize object __torch__.Net which does not have a __getstate__ method defined!`, checked by
// repros/python/selfplay_torchscript.py), so each worker loads
// the model file itself; inference runs under a cross-process lock (on a GPU there); the records
// go through a queue to ONE writer process, so that counting them and measuring the rate is easy.
//
// Here the model is a real TorchScript module, built in C++ (a torch::jit::Module named Net, its
// forward defined in TorchScript with Module::define):
//   spawn-pickled-module   the parent hands the module object to a spawned worker through
//                          libtorch's own pickler (torch::jit::pickle_save of module._ivalue());
//                          the worker's torch::jit::pickle_load fails with libtorch's own error.
//                          The parent tries the same bytes itself: it fails there too (measured
//                          here, libtorch 1.13), so the fault is what the pickle holds (the class's
//                          name and attributes, no code: both archives' records are listed), not
//                          the process boundary. Python fails one step earlier: it refuses to
//                          pickle the module at all.
//   spawn, forkserver      the source's fix: the parent saves the module (Module::save), each
//                          actor torch::jit::load()s it, infers under the lock, and sends records
//                          over a queue (record_queue.h: loopback TCP) to one writer process
//                          (selfplay_writer.cc: no torch; spawned, it is the native program).
//   fork-inherited-module  the same pipeline fork-started, the actors using the parent's module
//                          object itself: nothing is serialized, so it works (as in Python).
//   extra-fork-omp-*       NOT in the source: what the source's pipeline meets under fork with
//                          libgomp after the parent ran the model (torch-omp-pool-hang's
//                          mechanism), at the machine's default intra-op count and at a forced 2.
// Every actor's first forward runs a fixed probe batch; its output must match the parent's.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
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

#include "cases/record_queue.h"
#include "cases/shared_memory.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/environment.h"
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
constexpr int kActors = 2;  // on 2 cores: the writer and 2 actors
constexpr int kBatchesPerActor = 12;
constexpr int kForcedThreads = 2;
constexpr const char* kClassName = "Net";  // the source's model class: Python's __torch__.Net

constexpr const char* kPickled = "spawn-pickled-module";
constexpr const char* kInherited = "fork-inherited-module";
constexpr const char* kOmpDefault = "extra-fork-omp-default-threads";
constexpr const char* kOmpForced = "extra-fork-omp-2-threads";
constexpr const char* kForcedWhy =
    "forced to 2 so that the parent's forward starts an OpenMP team even where the machine's "
    "default is 1 intra-op thread (it is on a 2-core machine with Debian's libtorch)";

struct Shared {
  fc::cases::ProcessMutex inference;  // one forward at a time across processes (the source's GPU)
  std::atomic<int> inside;            // actors inside a locked forward right now
  std::atomic<int> most_inside;       // the most seen at once: 1 while the lock serialises
};

// libtorch's intra-op thread count before anything here set it. The first call decides: the
// variant list (computed first in every process) or run(), before either sets a count.
int machine_default_threads() {
  static const int n = at::get_num_threads();
  return n;
}

// The threads a process runs with; `forced_why` when this variant set the count itself. (Named
// thread_counts in the details: the harness may add a generic `threads` record of its own.)
json threads_record(const char* forced_why) {
  json t = {{"machine_default_intra_op", machine_default_threads()},
            {"intra_op_used", at::get_num_threads()},
            {"omp_max_threads", fc::omp_max_threads()},
            {"openmp_runtime", fc::openmp_runtime().path},
            {"forced", nullptr}};
  if (forced_why) t["forced"] = {{"count", at::get_num_threads()}, {"why", forced_why}};
  return t;
}

const char* kForward = R"JIT(
def forward(self, x):
    h = torch.relu(torch.matmul(x, self.w1) + self.b1)
    policy = torch.matmul(h, self.wp) + self.bp
    value = torch.tanh(torch.matmul(h, self.wv) + self.bv)
    return policy, value
)JIT";

// The policy/value network as a TorchScript module (its class: __torch__.Net), seeded weights.
torch::jit::Module build_model() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  torch::jit::Module m(kClassName);
  auto init = [&](int64_t in, int64_t out) {
    return torch::randn({in, out}, gen) / std::sqrt(static_cast<double>(in));
  };
  m.register_parameter("w1", init(kFeatures, kHidden), false);
  m.register_parameter("b1", torch::randn({kHidden}, gen) * 0.1, false);
  m.register_parameter("wp", init(kHidden, kMoves), false);
  m.register_parameter("bp", torch::randn({kMoves}, gen) * 0.1, false);
  m.register_parameter("wv", init(kHidden, 1), false);
  m.register_parameter("bv", torch::randn({1}, gen) * 0.1, false);
  m.define(kForward);
  m.eval();
  return m;
}

std::pair<torch::Tensor, torch::Tensor> forward(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  auto out = m.forward({x}).toTuple();
  return {out->elements()[0].toTensor(), out->elements()[1].toTensor()};
}

// The same batch in every process (no random generator): its output tells which weights ran.
// Filled in plain C++: torch's sin() of 16384 elements already goes parallel (VML's grain is
// 2048), and the first parallel op of a fork child should be the announced forward.
torch::Tensor probe_input() {
  std::vector<float> v(static_cast<size_t>(kBatch * kFeatures));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.01 * static_cast<double>(i)));
  return torch::from_blob(v.data(), {kBatch, kFeatures}, torch::kFloat).clone();
}
double probe_checksum(torch::jit::Module& m) {
  auto out = forward(m, probe_input());
  return out.first.sum().item<double>() + out.second.sum().item<double>();
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}
bool holds(const char* data, size_t size, const std::string& part) {
  return std::search(data, data + size, part.begin(), part.end()) != data + size;
}

// What a zip archive written by libtorch holds (pickle_save and Module::save both write one), read
// with libtorch's own reader (its records may be compressed): its records, whether its pickle
// names the class `type` (a GLOBAL opcode: module, newline, name), whether any code record holds
// the class's forward.
json archive_facts(const std::vector<char>& bytes, const c10::QualifiedName& type) {
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  caffe2::serialize::PyTorchStreamReader reader(&in);
  json records = json::array();
  bool names_class = false, forward_code = false;
  for (const auto& name : reader.getAllRecords()) {
    records.push_back(name);
    const bool pickle = name == "data.pkl", code = name.rfind("code/", 0) == 0 && name.size() > 3 &&
                                                   name.compare(name.size() - 3, 3, ".py") == 0;
    if (!pickle && !code) continue;
    auto record = reader.getRecord(name);
    const auto* data = static_cast<const char*>(std::get<0>(record).get());
    const size_t size = std::get<1>(record);
    if (pickle) names_class = holds(data, size, type.prefix() + "\n" + type.name());
    if (code) forward_code = forward_code || holds(data, size, "def forward");
  }
  return {{"bytes", bytes.size()},
          {"records", records},
          {"names_the_class", names_class},
          {"holds_forward_code", forward_code}};
}

// The source's attempt, in libtorch: the module object arrives as libtorch's pickle of it.
FORKCHECK_WORKER(selfplay_pickled_module) {
  const auto bytes = read_bytes(payload.at("pickle").get<std::string>());
  torch::jit::IValue v;
  try {
    v = torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    throw std::runtime_error("torch::jit::pickle_load of the " + std::to_string(bytes.size()) +
                             " bytes the parent pickled: " + e.what_without_backtrace());
  }
  // A libtorch that can rebuild it: run it as an actor would, and say what came out.
  torch::jit::Module m(v.toObject());
  return {{"pid", fc::launch::current_process_id()},
          {"bytes_read", bytes.size()},
          {"probe_checksum", probe_checksum(m)}};
}

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
      out = forward(*model, x);
      fc::channel::step_end(step);
    } else {
      out = forward(*model, x);
    }
    inference += monotonic_s() - t;
    sh->inside.fetch_sub(1);
    return out;
  };
  {
    auto out = locked_forward(probe_input(), true);
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

// The case's scratch directory (model, pickle, the writer's port file, records), removed on every
// way out. Its name is new: create_directory fails on one that exists, as mkdtemp would.
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

// spawn-pickled-module: the module object through libtorch's pickler to a spawned worker.
fc::CaseResult run_pickled(const fc::VariantSpec& variant, torch::jit::Module& model,
                           const std::string& pickle_path, const std::string& archive_path,
                           json details) {
  const std::vector<char> bytes = torch::jit::pickle_save(model._ivalue());
  write_bytes(pickle_path, bytes);
  model.save(archive_path);
  const auto archive = read_bytes(archive_path);
  const auto type = model.type()->name().value();
  details["pickle"] = archive_facts(bytes, type);
  details["pickle"]["api"] = "torch::jit::pickle_save(module._ivalue())";
  details["archive"] = archive_facts(archive, type);
  details["archive"]["api"] = "Module::save";
  fc::channel::send_details(details);

  auto workers = fc::start_pool(variant, "selfplay_pickled_module",
                                std::vector<json>{json{{"pickle", pickle_path}}});
  auto pool = fc::join_pool(workers, std::chrono::seconds(30));
  // The same bytes in the process that compiled the class: is the fault the process boundary?
  try {
    torch::jit::Module back(torch::jit::pickle_load(bytes).toObject());
    details["parent_pickle_load"] = {{"ok", true}, {"probe_checksum", probe_checksum(back)}};
  } catch (const c10::Error& e) {
    details["parent_pickle_load"] = {{"ok", false}, {"error", e.what_without_backtrace()}};
  }
  const json parent = details["parent_pickle_load"];
  if (pool.outcome == Outcome::kError)
    pool.message += parent["ok"].get<bool>()
                        ? " (the parent's own pickle_load of the same bytes worked)"
                        : " (the parent's own pickle_load of the same bytes: " +
                              parent["error"].get<std::string>() + ")";
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  machine_default_threads();  // before anything below sets a count
  const bool pickled = variant.name == kPickled, inherited = variant.name == kInherited;
  const bool forced = variant.name == kOmpForced;
  const bool forward_before_fork = forced || variant.name == kOmpDefault;
  TempDir dir;
  const std::string model_path = (dir.path / "model.pt").string();
  const std::string pickle_path = (dir.path / "module.pickle").string();
  const std::string queue_path = (dir.path / "queue.port").string();  // the writer's port
  const std::string records_path = (dir.path / "records.txt").string();
  auto seg = fc::cases::SharedSegment::create("selfplay", sizeof(Shared));
  // A hung variant is ended by SIGTERM, which runs no destructor: leave nothing behind then either.
  fc::cases::remove_segment_on_termination(seg.name());
  // (queue_path + ".tmp": the port file written aside, before the writer renames it.)
  for (const auto& p :
       {model_path, pickle_path, queue_path, queue_path + ".tmp", records_path, dir.path.string()})
    fc::cases::remove_on_termination(p);
  auto* sh = new (seg.data()) Shared();
  fc::cases::init_process_shared_mutex(&sh->inference);

  json details;
  details["scratch_dir"] = dir.path.string();
  details["shm_segment"] = seg.name();
  auto model = build_model();
  details["model"] = {
      {"class", model.type()->name()->qualifiedName()},
      {"format", "TorchScript: torch::jit::Module with forward from Module::define"},
      {"input", {kBatch, kFeatures}},
      {"hidden", kHidden},
      {"policy", kMoves}};
  if (forced) torch::set_num_threads(kForcedThreads);
  details["thread_counts"] = threads_record(forced ? kForcedWhy : nullptr);
  if (pickled) return run_pickled(variant, model, pickle_path, model_path, details);

  std::optional<double> reference;
  if (forward_before_fork) {  // the parent uses the model before it starts the actors
    const int before = fc::launch::thread_count();
    reference = probe_checksum(model);
    const int after = fc::launch::thread_count();
    details["parent_forward_before_fork"] = {{"intra_op_threads", at::get_num_threads()},
                                             {"threads_before", before},
                                             {"threads_after", after},
                                             {"went_parallel", after > before}};
  }
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
  // After the actors in the fixed variants: the parent ran no forward before they started.
  if (!reference) reference = probe_checksum(model);
  details["parent_probe_checksum"] = *reference;

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
    if (std::abs(probe - *reference) > 1e-5 * std::max(1.0, std::abs(*reference)))
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
                     std::to_string(*reference);
    return result;
  }
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "%d actors (model: %s) each gave the parent's probe output (%.4f); at most %d "
                "forward at once under the lock; they sent %ld records to one writer, which "
                "wrote all %ld (%.0f records/s from its first to its last)",
                kActors, pool.workers[0]["result"]["model_source"].get<std::string>().c_str(),
                *reference, sh->most_inside.load(), sent_total, lines,
                details["writer_rate"]["records_per_second"].get<double>());
  result.message = msg;
  return result;
}

// The extra variants' expectation, from the default (or forced) count and the OpenMP runtime.
fc::VariantSpec omp_variant(const char* name, int threads, bool forced,
                            const fc::OpenMpRuntime& rt) {
  const std::string count = std::to_string(threads) + " intra-op thread" +
                            (threads == 1 ? "" : "s") +
                            (forced ? " (forced: " + std::string(kForcedWhy) + ")"
                                    : " (the machine's default: at::get_num_threads() before "
                                      "any set_num_threads)");
  Outcome expected = Outcome::kOk;
  std::string why;
  const char* kmp = std::getenv("KMP_INIT_AT_FORK");
  const bool kmp_off = kmp && (std::string(kmp) == "FALSE" || std::string(kmp) == "false" ||
                               std::string(kmp) == "0");
  if (threads <= 1) {
    why = "with " + count +
          " at::parallel_for runs every op inline on the calling thread: the "
          "parent's forward starts no " +
          rt.name +
          " team, so there is nothing stale to "
          "inherit at fork";
  } else if (rt.name == "libgomp") {
    expected = Outcome::kHang;
    why = "with " + count +
          " the parent's forward runs its 256x256 bias add and relu in an "
          "OpenMP region, so libgomp's pool exists at fork; libgomp (" +
          rt.path +
          ") has no "
          "atfork handling, and a fork child's first 2-thread region waits for pool threads "
          "fork() did not copy";
  } else if ((rt.name == "libomp" || rt.name == "libiomp") && kmp_off) {
    expected = Outcome::kHang;
    why = "with " + count + " the parent's forward starts an OpenMP team; " + rt.name +
          " would reinitialise it in the child through its atfork handler, but "
          "KMP_INIT_AT_FORK=" +
          kmp + " turns that off";
  } else {
    why = "with " + count + " the parent's forward starts an OpenMP team, but " + rt.name + " (" +
          rt.path +
          ") registers pthread_atfork handlers that give a fork child a fresh "
          "pool";
  }
  auto v = fc::hazard(
      name, "fork", expected, why,
      std::string("NOT from the source (it used spawn): what its pipeline meets under fork with ") +
          "OpenMP. The parent runs the model with " +
          (forced ? "a forced " + std::to_string(threads) : std::string("the default")) +
          " intra-op count, then fork-starts the writer and the actors, which load the model file");
  if (!at::hasOpenMP())
    v.skip("this libtorch was built without OpenMP: there is no OpenMP pool to inherit");
  else if (rt.name.empty())
    v.skip("no loaded library defines omp_get_max_threads: which OpenMP runtime runs is unknown");
  return v;
}

std::vector<fc::VariantSpec> variants() {
  const fc::OpenMpRuntime rt = fc::openmp_runtime();
  return {
      fc::hazard(kPickled, "spawn", Outcome::kError,
                 "libtorch's pickler writes a script object as its class's name (__torch__.Net) "
                 "and its attributes, without the class's TorchScript code; "
                 "torch::jit::pickle_load has no way to find that class, so the spawned worker "
                 "cannot rebuild the module (as Python 1.13 refuses to pickle it at all)",
                 "the parent builds the TorchScript module, pickles module._ivalue() with "
                 "torch::jit::pickle_save, and a spawned worker pickle_load()s the bytes; then "
                 "the parent tries the same bytes itself"),
      fc::fix("spawn", "spawn",
              "each actor is a fresh exec that torch::jit::load()s the saved module: the archive "
              "holds the class's code, so the worker compiles it and runs the same weights",
              "the source's fix: the parent saves the module; a writer and 2 spawned actors, "
              "each loads the model, infers under a cross-process lock, sends records to the "
              "writer"),
      fc::fix("forkserver", "forkserver",
              "actors forked by a server started before the parent touched torch load the model "
              "themselves, as under spawn",
              "as `spawn`, the writer and actors forked by the forkserver"),
      fc::hazard(kInherited, "fork", Outcome::kOk,
                 "under fork nothing is serialized: the child has the parent's memory, module "
                 "object included, and the parent ran no forward before the fork (so no OpenMP "
                 "team is inherited either)",
                 "the pipeline fork-started, the actors running the parent's module object "
                 "itself (Python: the scripted module as a Process argument under fork works)"),
      omp_variant(kOmpDefault, machine_default_threads(), false, rt),
      omp_variant(kOmpForced, kForcedThreads, true, rt),
  };
}

}  // namespace

FORKCHECK_CASE(selfplay_pipeline_case) {
  fc::CaseDef c;
  c.id = "selfplay-pipeline";
  c.title = "Self-play actors: a TorchScript model cannot be handed over, each worker loads it";
  c.source_title = "Gumbel dlshogiを作る その5(マルチプロセス対応)";
  c.source_author = "TadaoYamaoka";
  c.source_doc = "001";
  c.reported =
      "torch.multiprocessing with model.share_memory() would share the parameters, but with a "
      "TorchScript model it failed with an error, so each process loads the model itself (one "
      "copy per process); GPU inference slows down when processes compete, so it runs under a "
      "lock; one writer process fed through multiprocessing.Manager().Queue() counts and writes "
      "the records; spawn is used explicitly because fork is said to be trouble with CUDA.";
  c.mechanism =
      "Handing a scripted module to a spawned process means serializing it. Python 1.13 refuses "
      "(no __getstate__ on __torch__.Net); libtorch's pickler writes the object as its class "
      "name and attributes without the class's code, and pickle_load cannot rebuild it. "
      "Module::save writes an archive with the code, which torch::jit::load compiles in each "
      "worker. Under fork the module is inherited without serialization.";
  c.platforms =
      "all (Windows: spawn only, as everywhere there); the extra fork variants hang only with "
      "libgomp (Debian's libtorch) and more than one intra-op thread";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"does not have a __getstate__ method defined",
       "a TorchScript module cannot be pickled to a spawned worker: save it "
       "(torch.jit.save) and let each worker torch.jit.load it"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"torch-threads", "openmp",   "omp-threads",
                          "cpus",          "libtorch", "start-methods"};
  return c;
}
