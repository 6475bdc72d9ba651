// state-not-shared (source 002): the author wanted a class variable in the environment class to
// record which ports are taken. Each worker process has its own copy of that variable (fork:
// copy-on-write; spawn: a fresh one), so what a worker records never reaches the parent or the
// other workers, and every worker picks the same "free" port. Fixed with the counter in shared
// memory (an atomic in a shared mapping: anonymous for fork, a named segment for spawn), or with
// the state owned by the parent, which hands each worker its port.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/pool.h"
#include "core/shared_segment.h"
#include "launch/process.h"

namespace {
namespace state_not_shared {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 4;
constexpr int kBasePort = 4100;

// The source's idea: class-level state of the environment class.
struct PortRegistry {
  static int ports_in_use;
  static int take() { return kBasePort + ports_in_use++; }
};
int PortRegistry::ports_in_use = 0;

static_assert(std::atomic<int>::is_always_lock_free,
              "a cross-process counter needs lock-free atomics");

FORKCHECK_WORKER(port_worker) {
  const std::string how = payload.at("how").get<std::string>();
  int port = -1, seen = -1;
  if (how == "class") {
    port = PortRegistry::take();
    seen = PortRegistry::ports_in_use;
  } else if (how == "shared-fork") {  // the parent's mapping, inherited by fork
    auto* counter =
        reinterpret_cast<std::atomic<int>*>(payload.at("counter_at").get<std::uintptr_t>());
    seen = counter->fetch_add(1) + 1;
    port = kBasePort + seen - 1;
  } else if (how == "shared-named") {  // a fresh process opens the segment by name
    auto segment =
        fc::SharedSegment::open(payload.at("shm").get<std::string>(), sizeof(std::atomic<int>));
    auto* counter = static_cast<std::atomic<int>*>(segment.data());
    seen = counter->fetch_add(1) + 1;
    port = kBasePort + seen - 1;
  } else {  // "assigned": the parent owns the state and says which port
    port = payload.at("port").get<int>();
  }
  return {{"worker", payload.at("worker")},
          {"pid", fc::launch::current_process_id()},
          {"port", port},
          {"ports_in_use_seen_by_worker", seen}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const std::string how = variant.name == "fork-shared-memory"        ? "shared-fork"
                          : variant.name == "spawn-shared-memory"     ? "shared-named"
                          : variant.name == "spawn-ports-from-parent" ? "assigned"
                                                                      : "class";
  json details = {{"counter", how}};
  std::atomic<int>* counter = nullptr;
  // The anonymous mapping fork workers inherit, unmapped on every path out.
  std::unique_ptr<void, void (*)(void*)> fork_shared(
      nullptr, [](void* p) { fc::launch::unmap_fork_shared(p, sizeof(std::atomic<int>)); });
  std::unique_ptr<fc::SharedSegment> segment;  // the named one spawned workers open
  if (how == "shared-fork") {
    fork_shared.reset(fc::launch::map_fork_shared(sizeof(std::atomic<int>)));
    counter = new (fork_shared.get()) std::atomic<int>(0);
  } else if (how == "shared-named") {
    segment = std::make_unique<fc::SharedSegment>(
        fc::SharedSegment::create("ports", sizeof(std::atomic<int>)));
    counter = new (segment->data()) std::atomic<int>(0);
    details["shm"] = segment->name();
  }
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i) {
    json p = {{"worker", i}, {"how", how}};
    if (how == "shared-fork") p["counter_at"] = reinterpret_cast<std::uintptr_t>(counter);
    if (how == "shared-named") p["shm"] = segment->name();
    if (how == "assigned") p["port"] = PortRegistry::take();  // the parent's own bookkeeping
    payloads.push_back(std::move(p));
  }
  auto workers = fc::start_pool(variant, "port_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(20));
  // What the parent believes is in use: the class-level counter, or the shared one.
  const int parent_sees = counter ? counter->load() : PortRegistry::ports_in_use;
  segment.reset();  // unmapped, and its name removed
  details["parent_sees_ports_in_use"] = parent_sees;
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);

  std::set<int> distinct;
  std::string taken;
  for (const auto& w : pool.workers) {
    distinct.insert(w["result"]["port"].get<int>());
    taken += (taken.empty() ? "" : ", ") + std::to_string(w["result"]["port"].get<int>());
  }
  details["ports_taken"] = distinct;
  if (parent_sees != kWorkers || distinct.size() != kWorkers) {
    pool.outcome = Outcome::kError;
    pool.message = "parent sees " + std::to_string(parent_sees) + " ports in use after " +
                   std::to_string(kWorkers) + " workers each took one (they took " + taken +
                   (distinct.size() != kWorkers ? ": one port handed out more than once" : "") +
                   ")" +
                   (how == "class" ? "; each bumped its own copy of the class-level counter" : "");
  } else {
    pool.message = "parent sees " + std::to_string(parent_sees) +
                   " ports in use; the workers took " + taken + ", all distinct";
  }
  return fc::to_case_result(std::move(pool), details);
}

std::vector<fc::VariantSpec> variants() {
  const char* own_copy =
      "each worker process has its own copy of the class-level counter; what a "
      "worker adds never reaches the parent";
  return {
      fc::hazard("fork", "fork", Outcome::kError,
                 std::string(own_copy) + " (fork: copy-on-write, the counter is 0 in every copy)",
                 "4 fork workers each take a port with PortRegistry::take()"),
      fc::hazard("spawn", "spawn", Outcome::kError,
                 std::string(own_copy) + " (spawn: a fresh process, the counter starts at 0)",
                 "4 spawn workers each take a port with PortRegistry::take()"),
      fc::fix("fork-shared-memory", "fork",
              "one atomic counter in a MAP_SHARED|MAP_ANONYMOUS mapping made before fork: every "
              "process increments the same memory",
              "the counter lives in shared memory inherited by the fork workers"),
      fc::fix("spawn-shared-memory", "spawn",
              "one atomic counter in a named shared memory segment (POSIX shm_open; Windows: a "
              "named file mapping) that each spawned worker maps",
              "the counter lives in a named segment the workers open by name"),
      fc::fix("spawn-ports-from-parent", "spawn",
              "the parent owns the bookkeeping and hands each worker its port",
              "the parent takes the ports and passes each worker its own in the payload"),
  };
}

FORKCHECK_CASE(state_not_shared_case) {
  fc::CaseDef c;
  c.id = "state-not-shared";
  c.title = "A class-level counter bumped in workers stays 0 in the parent";
  c.source_title = "untitled: 需要用到SubprocVecEnv并行采样 (section 类变量计数)";
  c.source_author = "not named (its traceback's home directory is /home/illya)";
  c.source_doc = "002";
  c.reported =
      "To record whether a port is taken, the author thought of a class variable in the "
      "environment class, then realised the workers' address spaces differ and gave up "
      "(\"多进程同步太麻烦\").";
  c.mechanism =
      "A class variable is ordinary process memory. fork gives each worker a copy-on-write copy "
      "and spawn a fresh one; increments land in the worker's copy only. State shared across "
      "processes has to live in shared memory, or be owned by one process (the parent).";
  c.platforms = "any";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"start-methods"};
  return c;
}

}  // namespace state_not_shared
}  // namespace
