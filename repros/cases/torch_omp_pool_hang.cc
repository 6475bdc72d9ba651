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

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/environment.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace torch_omp_pool_hang {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 2;     // the source had 4 (--proc); 2 keeps spawn's start-up short
constexpr int kThreads = 2;     // forced: Debian's libtorch defaults to 1 on a 2-core machine
constexpr int64_t kSide = 512;  // 512x512 elements: above ATen's parallel grain

// Runs `op` and says whether it started threads (libgomp's pool thread appears on the first
// region with more than one thread and stays parked afterwards).
template <class Op>
json probe(const char* name, Op op) {
  const int before = fc::launch::thread_count();
  op();
  const int after = fc::launch::thread_count();
  return {{"op", name},
          {"threads_before", before},
          {"threads_after", after},
          {"went_parallel", after > before}};
}

FORKCHECK_WORKER(torch_pool_op) {
  // 0: the machine's default, as the source's program ran; otherwise set here too, as the
  // source's workaround does in the child.
  if (const int threads = payload.at("threads").get<int>(); threads > 0)
    torch::set_num_threads(threads);
  auto a = torch::rand({kSide, kSide});  // random fills are serial
  char step[128];
  std::snprintf(step, sizeof step,
                "torch sum() of a 512x512 tensor in the worker (%d intra-op threads)",
                at::get_num_threads());
  const int before = fc::launch::thread_count();
  fc::channel::step_begin(step);
  const double s = a.sum().item<double>();
  fc::channel::step_end(step);
  const int after = fc::launch::thread_count();
  return {{"pid", fc::launch::current_process_id()},
          {"intra_op_threads", at::get_num_threads()},
          {"threads_before_op", before},
          {"threads_after_op", after},
          {"went_parallel", after > before},
          {"sum", s}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool one_thread = variant.name == "fork-set-num-threads-1";
  const bool machine_default = variant.name == "fork-default-threads";
  json details;
  details["machine_default_intra_op_threads"] = at::get_num_threads();
  details["intra_op_threads_forced"] = machine_default ? json(nullptr) : json(kThreads);
  // set_num_threads also sizes libtorch's pthreadpool, which may start a thread of its own.
  details["parent_threads_before_set_num_threads"] = fc::launch::thread_count();
  if (!machine_default) torch::set_num_threads(kThreads);
  details["parent_intra_op_threads"] = at::get_num_threads();
  auto a = torch::rand({kSide, kSide}), b = torch::rand({kSide, kSide});
  // mm first: once sum() has started libgomp's pool, no later op could show a new thread.
  json ops = json::array();
  ops.push_back(probe("mm 512x512 (BLAS)", [&] { (void)torch::mm(a, b); }));
  ops.push_back(probe("sum() 512x512", [&] { (void)a.sum().item<double>(); }));
  details["parent_ops"] = ops;
  std::string parallel;
  for (const auto& o : ops)
    if (o["went_parallel"].get<bool>())
      parallel += (parallel.empty() ? "" : ", ") + o["op"].get<std::string>();
  details["parent_op_that_entered_openmp"] = parallel.empty() ? "none" : parallel;
  if (one_thread) torch::set_num_threads(1);  // the source's "magic": before creating the pool
  details["intra_op_threads_at_start"] = at::get_num_threads();
  details["parent_threads_at_start"] = fc::launch::thread_count();
  fc::channel::send_details(details);

  const int worker_threads = machine_default ? 0 : one_thread ? 1 : kThreads;
  std::vector<json> payloads(kWorkers, json{{"threads", worker_threads}});
  auto workers = fc::start_pool(variant, "torch_pool_op", payloads);
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(30)), details);
}

// libtorch's intra-op default here, as a variant's process starts (it honours OMP_NUM_THREADS).
int default_intra_op_threads() {
  static const int n = at::get_num_threads();
  return n;
}

// What a fork child meets with `threads` intra-op threads in the parent, by OpenMP runtime:
// decided here, before anything runs, from the runtime this libtorch has loaded.
fc::VariantSpec fork_variant(std::string name, int threads, const std::string& runtime,
                             std::string description) {
  const int dflt = default_intra_op_threads();
  const std::string count =
      std::to_string(threads) + " intra-op thread" + (threads == 1 ? "" : "s");
  Outcome expected = Outcome::kOk;
  std::string why;
  if (threads < 2) {
    why = "libtorch's default here is " + count +
          ": at::parallel_for runs every op inline on the "
          "calling thread, so the parent starts no OpenMP team and a fork child has none to "
          "inherit. The hazard needs a team, which libtorch starts by default where it counts 2 "
          "cores or "
          "more, or where OMP_NUM_THREADS asks for 2 or more "
          "(the `fork` variant forces 2 threads to show it)";
  } else if (runtime == "libgomp (GNU)") {
    expected = Outcome::kHang;
    why = "the parent's sum() of 512x512 with " + count + " runs an OpenMP region, so " + runtime +
          "'s pool exists at fork; libgomp registers no atfork handler, and a fork child's first "
          "multi-threaded region waits for pool threads fork() did not copy";
  } else {
    why = "this libtorch's OpenMP runtime is " + runtime +
          ", which registers atfork handlers and "
          "starts a fresh pool in a fork child (LLVM's and Intel's do; only libgomp does not), so "
          "the pool the parent started with " +
          count + " does not hang the child";
  }
  auto v = fc::hazard(std::move(name), "fork", expected, why, std::move(description));
  if (runtime.empty())
    v.skip("this libtorch loads no OpenMP runtime: there is no thread pool to inherit");
  else if (threads >= 2 && threads != dflt)
    v.expected_why +=
        " (" + count + " forced: libtorch's default here is " + std::to_string(dflt) + ")";
  return v;
}

std::vector<fc::VariantSpec> variants() {
  const auto runtimes = fc::openmp_runtimes_loaded();
  std::string runtime;
  for (const auto& r : runtimes) runtime += (runtime.empty() ? "" : " + ") + r.family;
  const int dflt = default_intra_op_threads();
  return {
      fork_variant("fork-default-threads", dflt, runtime,
                   "the source's pool at libtorch's default thread count here (" +
                       std::to_string(dflt) +
                       "): nothing set, 2 fork-started workers run the "
                       "op, the parent joins them"),
      fork_variant("fork", kThreads, runtime,
                   "the source's pool with 2 intra-op threads forced (the default here is " +
                       std::to_string(dflt) +
                       "): parent runs the op, 2 fork-started workers "
                       "run it too, the parent joins them"),
      fc::fix("fork-set-num-threads-1", "fork",
              "with one intra-op thread at::parallel_for runs every op inline on the calling "
              "thread, so the child never starts an OpenMP region. A workaround (the source calls "
              "it \"magic\"): it works by limiting intra-op parallelism to one thread",
              "as `fork`, with torch::set_num_threads(1) in the parent before the pool and in "
              "each worker"),
      fc::fix("spawn", "spawn",
              "a spawned worker is a fresh exec with a fresh OpenMP runtime (" + runtime +
                  "): its 2-thread region starts its own pool",
              "same parent; 2 spawned workers run the op with 2 threads"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent's first OpenMP region, so its children "
              "have no " +
                  runtime + " pool to inherit",
              "same parent; 2 workers forked by a server started before any thread"),
  };
}

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
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"torch-threads", "openmp",   "omp-threads",  "openmp-vars",
                          "cpus",          "libtorch", "start-methods"};
  c.shows_as = {"risk:fork-with-openmp"};
  return c;
}

}  // namespace torch_omp_pool_hang
}  // namespace
