// torchscript-pickle-spawn (source 001, dlshogi): the source tried to hand its TorchScript model
// to torch.multiprocessing workers and "it failed with an error" (it quotes none), so each worker
// loads the model file itself (selfplay-pipeline). PyTorch 1.13 under spawn raises `Tried to
// serialize object __torch__.Net which does not have a __getstate__ method defined!`
// (repros/python/selfplay_torchscript.py checks it). In libtorch, with a real TorchScript module
// (support/scripted_net.h):
//   spawn-pickled-module     the module object through libtorch's own pickler
//                            (torch::jit::pickle_save of module._ivalue()) to a spawned worker,
//                            whose torch::jit::pickle_load fails. The parent tries the same bytes
//                            itself and fails the same way (measured here, libtorch 1.13): the
//                            fault is what the pickle holds (the class's name and attributes, no
//                            code: both archives' records are listed), not the process boundary.
//   spawn-saved-module,      the source's fix: Module::save writes an archive with the class's
//   forkserver-saved-module  code, and the worker's torch::jit::load compiles it.
//   fork-inherited-module    nothing is serialized: the fork child runs the parent's object.
// Every worker runs a fixed probe batch; its output must match the parent's.
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/scratch_dir.h"
#include "cases/support/scripted_net.h"
#include "cases/support/shared_memory.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace torchscript_pickle_spawn {

using fc::Outcome;
using nlohmann::json;
namespace net = fc::cases::scripted_net;

constexpr const char* kPickled = "spawn-pickled-module";
constexpr const char* kInherited = "fork-inherited-module";

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

// The parent's module; a fork child has it too (fork-inherited-module), a spawned one does not.
torch::jit::Module* g_parent_model = nullptr;

// The module as the variant hands it over: libtorch's pickle of the object, the archive
// Module::save wrote, or (fork) the parent's object itself. Then the probe batch through it.
FORKCHECK_WORKER(scripted_module_worker) {
  torch::jit::Module m;
  std::string source;
  if (payload.contains("pickle")) {
    const auto bytes = read_bytes(payload.at("pickle").get<std::string>());
    torch::jit::IValue v;
    try {
      v = torch::jit::pickle_load(bytes);
    } catch (const c10::Error& e) {
      throw std::runtime_error("torch::jit::pickle_load of the " + std::to_string(bytes.size()) +
                               " bytes the parent pickled: " + e.what_without_backtrace());
    }
    m = torch::jit::Module(v.toObject());  // a libtorch that can rebuild it: run it
    source = "torch::jit::pickle_load of the parent's pickle";
  } else if (payload.contains("archive")) {
    m = torch::jit::load(payload.at("archive").get<std::string>());
    m.eval();
    source = "torch::jit::load of the archive the parent saved";
  } else if (g_parent_model) {
    m = *g_parent_model;  // the same object (a Module is a handle to it)
    source = "the parent's module object, inherited through fork";
  } else {
    throw std::runtime_error("this process has no parent's module: it was not forked from it");
  }
  return {{"pid", fc::launch::current_process_id()},
          {"model_source", source},
          {"probe_checksum", net::probe_checksum(m)}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const fc::cases::ScratchDir dir("torchscript");
  const std::string pickle_path = dir.file("module.pickle");
  const std::string archive_path = dir.file("module.pt");
  for (const auto& p : {pickle_path, archive_path, dir.path().string()})
    fc::cases::remove_on_termination(p);  // a SIGTERM runs no destructor

  auto model = net::build();
  const auto type = model.type()->name().value();
  json details;
  details["scratch_dir"] = dir.path().string();
  details["model"] = {
      {"class", type.qualifiedName()},
      {"format", "TorchScript: torch::jit::Module with forward from Module::define"}};
  json payload = json::object();
  if (variant.name == kPickled) {
    const std::vector<char> bytes = torch::jit::pickle_save(model._ivalue());
    write_bytes(pickle_path, bytes);
    model.save(archive_path);  // for its records, beside the pickle's
    details["pickle"] = archive_facts(bytes, type);
    details["pickle"]["api"] = "torch::jit::pickle_save(module._ivalue())";
    details["archive"] = archive_facts(read_bytes(archive_path), type);
    details["archive"]["api"] = "Module::save";
    payload["pickle"] = pickle_path;
  } else if (variant.name == kInherited) {
    g_parent_model = &model;  // the worker uses this very object: fork copies it
  } else {
    model.save(archive_path);
    payload["archive"] = archive_path;
  }
  fc::channel::send_details(details);

  auto workers = fc::start_pool(variant, "scripted_module_worker", std::vector<json>{payload});
  auto pool = fc::join_pool(workers, std::chrono::seconds(30));
  g_parent_model = nullptr;
  // After the worker: the parent ran no forward before it was started (no OpenMP team at fork).
  const double reference = net::probe_checksum(model);
  details["parent_probe_checksum"] = reference;
  if (variant.name == kPickled) {
    // The same bytes in the process that compiled the class: is the fault the process boundary?
    try {
      torch::jit::Module back(torch::jit::pickle_load(read_bytes(pickle_path)).toObject());
      details["parent_pickle_load"] = {{"ok", true}, {"probe_checksum", net::probe_checksum(back)}};
    } catch (const c10::Error& e) {
      details["parent_pickle_load"] = {{"ok", false}, {"error", e.what_without_backtrace()}};
    }
    const json parent = details["parent_pickle_load"];
    if (pool.outcome == Outcome::kError)
      pool.message += parent["ok"].get<bool>()
                          ? " (the parent's own pickle_load of the same bytes worked)"
                          : " (the parent's own pickle_load of the same bytes failed the same "
                            "way: " +
                                parent["error"].get<std::string>() + ")";
  }
  if (pool.outcome == Outcome::kOk) {
    const json& r = pool.workers.at(0)["result"];
    const double probe = r["probe_checksum"].get<double>();
    if (std::abs(probe - reference) > 1e-5 * std::max(1.0, std::abs(reference))) {
      pool.outcome = Outcome::kError;
      pool.message = "the worker's probe gave " + std::to_string(probe) + ", the parent's " +
                     std::to_string(reference) + ": it did not run the parent's weights";
    } else {
      pool.message = "the worker ran the parent's weights (" +
                     r["model_source"].get<std::string>() + "): its probe output " +
                     std::to_string(probe) + " is the parent's";
    }
  }
  return fc::to_case_result(std::move(pool), details);
}

std::vector<fc::VariantSpec> variants() {
  const char* saved =
      "Module::save writes an archive that holds the class's TorchScript code: the worker's "
      "torch::jit::load compiles it and runs the parent's weights";
  return {
      fc::hazard(kPickled, "spawn", Outcome::kError,
                 "libtorch's pickler writes a script object as its class's name (__torch__.Net) "
                 "and its attributes, without the class's code, and torch::jit::pickle_load has "
                 "no way to find that class: no process can load these bytes (the parent's own "
                 "pickle_load fails the same way, recorded beside). Spawn is where a program "
                 "meets it, because spawn serializes what fork inherits; Python 1.13 refuses one "
                 "step earlier, when pickling",
                 "the parent builds the TorchScript module, pickles module._ivalue() with "
                 "torch::jit::pickle_save, and a spawned worker pickle_load()s the bytes; then "
                 "the parent tries the same bytes itself"),
      fc::fix("spawn-saved-module", "spawn", saved,
              "the source's fix: the parent saves the module with Module::save; a spawned "
              "worker torch::jit::load()s the file and runs the probe batch"),
      fc::fix("forkserver-saved-module", "forkserver", saved,
              "as `spawn-saved-module`, the worker forked by the forkserver"),
      fc::hazard(kInherited, "fork", Outcome::kOk,
                 "under fork nothing is serialized: the child has the parent's memory, module "
                 "object included",
                 "a fork worker runs the parent's module object itself on the probe batch "
                 "(Python: the scripted module as a Process argument under fork works)"),
  };
}

FORKCHECK_CASE(torchscript_pickle_spawn_case) {
  fc::CaseDef c;
  c.id = "torchscript-pickle-spawn";
  c.title = "A TorchScript module pickled to a spawned worker: the pickle holds no code to load";
  c.source_title = "Gumbel dlshogiを作る その5(マルチプロセス対応)";
  c.source_author = "TadaoYamaoka";
  c.source_doc = "001";
  c.reported =
      "torch.multiprocessing with model.share_memory() would share the parameters, but with a "
      "TorchScript model it failed with an error (the source quotes none), so each process "
      "loads the model file itself.";
  c.mechanism =
      "Handing a scripted module to a spawned process means serializing it. Python 1.13 refuses "
      "(no __getstate__ on __torch__.Net); libtorch's pickler writes the object as its class "
      "name and attributes without the class's code, and pickle_load cannot rebuild it, in the "
      "worker or anywhere else. Module::save writes an archive with the code, which "
      "torch::jit::load compiles in each worker. Under fork the module is inherited without "
      "serialization.";
  c.platforms = "all (Windows: spawn only, as everywhere there)";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"does not have a __getstate__ method defined",
       "a TorchScript module cannot be pickled to a spawned worker: save it "
       "(torch.jit.save) and let each worker torch.jit.load it"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"libtorch", "start-methods"};
  return c;
}

}  // namespace torchscript_pickle_spawn
}  // namespace
