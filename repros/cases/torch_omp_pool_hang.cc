// torch-omp-pool-hang (source 003): the source's multiprocessing.Pool of training workers never
// gets past pool.join() on a Linux server. The parent ran a torch op big enough for ATen to
// parallelise it with OpenMP (libgomp), so libgomp's thread pool exists when the pool forks; each
// fork-started worker that runs such an op starts a 2-thread region and waits forever for pool
// threads that fork() did not copy (gomp-fork-hang's mechanism, reached through torch).
//
// Which op goes parallel depends on the build: with Debian's generic BLAS `mm` runs serially in
// the BLAS, while `sum()` of 512x512 (262144 elements, above ATen's grain of 32768) is split by
// at::parallel_for into an OpenMP region. The parent probes both and records which one started
// libgomp's pool thread.
#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/launch.h"
#include "launch/process.h"

namespace {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 2;     // the source had 4 (--proc); 2 keeps spawn's start-up short
constexpr int kThreads = 2;     // Debian's libtorch would default to 1 on a 2-core machine
constexpr int64_t kSide = 512;  // 512x512 elements: above ATen's parallel grain

// Runs `op` and says whether it started threads (libgomp's pool thread appears on the first
// region with more than one thread and stays parked afterwards).
template <class Op>
json probe(const char* name, Op op) {
  const int before = fc::launch::thread_count();
  op();
  const int after = fc::launch::thread_count();
  return {{"op", name}, {"threads_before", before}, {"threads_after", after},
          {"went_parallel", after > before}};
}

FORKCHECK_WORKER(torch_pool_op) {
  const int threads = payload.at("threads").get<int>();
  torch::set_num_threads(threads);  // the source's workaround also sets it in the child
  auto a = torch::rand({kSide, kSide});  // random fills are serial
  char step[128];
  std::snprintf(step, sizeof step, "torch sum() of a 512x512 tensor in the worker (%d intra-op threads)",
                at::get_num_threads());
  const int before = fc::launch::thread_count();
  fc::channel::step_begin(step);
  const double s = a.sum().item<double>();
  fc::channel::step_end(step);
  const int after = fc::launch::thread_count();
  return {{"pid", fc::launch::current_process_id()}, {"intra_op_threads", at::get_num_threads()},
          {"threads_before_op", before}, {"threads_after_op", after},
          {"went_parallel", after > before}, {"sum", s}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool one_thread = variant.name == "fork-set-num-threads-1";
  json details;
  // set_num_threads also sizes libtorch's pthreadpool, which may start a thread of its own.
  details["parent_threads_before_set_num_threads"] = fc::launch::thread_count();
  torch::set_num_threads(kThreads);
  details["parent_intra_op_threads"] = at::get_num_threads();
  auto a = torch::rand({kSide, kSide}), b = torch::rand({kSide, kSide});
  // mm first: once sum() has started libgomp's pool, no later op could show a new thread.
  json ops = json::array();
  ops.push_back(probe("mm 512x512 (BLAS)", [&] { (void)torch::mm(a, b); }));
  ops.push_back(probe("sum() 512x512", [&] { (void)a.sum().item<double>(); }));
  details["parent_ops"] = ops;
  std::string parallel;
  for (const auto& o : ops)
    if (o["went_parallel"].get<bool>()) parallel += (parallel.empty() ? "" : ", ") + o["op"].get<std::string>();
  details["parent_op_that_entered_openmp"] = parallel.empty() ? "none" : parallel;
  if (one_thread) torch::set_num_threads(1);  // the source's "magic": before creating the pool
  details["intra_op_threads_at_start"] = at::get_num_threads();
  details["parent_threads_at_start"] = fc::launch::thread_count();
  fc::channel::send_details(details);

  std::vector<json> payloads(kWorkers, json{{"threads", one_thread ? 1 : kThreads}});
  auto workers = fc::start_pool(variant, "torch_pool_op", payloads);
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(30)), details);
}

std::vector<fc::VariantSpec> variants() {
  auto fork = fc::hazard(
      "fork", "fork", Outcome::kHang,
      "the parent's sum() of 512x512 with 2 intra-op threads runs an OpenMP region, so libgomp's "
      "pool exists at fork; libgomp registers no atfork handler, and a fork child's first "
      "2-thread region waits for pool threads fork() did not copy",
      "the source's pool: parent runs the op with 2 threads, 2 fork-started workers run it too, "
      "the parent joins them");
  if (!at::hasOpenMP())
    fork.skip("this libtorch was built without OpenMP: there is no libgomp pool to inherit");
  return {
      fork,
      fc::fix("fork-set-num-threads-1", "fork",
              "with one intra-op thread at::parallel_for runs every op inline on the calling "
              "thread, so the child never starts an OpenMP region. A workaround (the source calls "
              "it \"magic\"): it works by limiting intra-op parallelism to one thread",
              "as `fork`, with torch::set_num_threads(1) in the parent before the pool and in "
              "each worker"),
      fc::fix("spawn", "spawn",
              "a spawned worker is a fresh exec with a fresh libgomp: its 2-thread region starts "
              "its own pool",
              "same parent; 2 spawned workers run the op with 2 threads"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent's first OpenMP region, so its children "
              "have no libgomp pool to inherit",
              "same parent; 2 workers forked by a server started before any thread"),
  };
}

}  // namespace

FORKCHECK_CASE(torch_omp_pool_hang_case) {
  fc::CaseDef c;
  c.id = "torch-omp-pool-hang";
  c.title = "A fork-based pool of torch workers hangs at join after the parent ran a parallel op";
  c.source_title = "Pytorch多进程睡死的大坑";
  c.source_author = "ZERO-A-ONE";
  c.source_doc = "003";
  c.reported =
      "mp.Pool(4) with apply_async(main) works on Windows; on the Linux server the workers never "
      "exit and the program stays in pool.join(). Fixed with mp.set_start_method(\"spawn\") (or "
      "forkserver); torch.set_num_threads(1) in the parent and the child also avoids it, which "
      "the author calls a \"magic\" method that limits OpenMP's multi-threading.";
  c.mechanism =
      "ATen splits ops above a grain of 32768 elements into an OpenMP parallel region when it has "
      "more than one intra-op thread. libgomp keeps the region's threads in a pool and has no "
      "pthread_atfork handling: a fork child inherits pool bookkeeping for threads that do not "
      "exist in it, and its next multi-threaded region waits on a futex forever.";
  c.platforms = "Linux with GCC's libgomp (Debian's libtorch); any libtorch built with libgomp";
  c.variants = &variants;
  c.run = &run;
  return c;
}
