// gomp-fork-hang (source 003): the parent runs an OpenMP parallel region with libgomp, forks, and
// the child's next parallel region never returns. libgomp has no atfork handling: the child's
// copy of the thread pool still lists workers that do not exist in it, and the team start waits
// on a futex for them forever.
#include <omp.h>
#include <unistd.h>

#include <chrono>

#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/launch.h"

namespace {

constexpr int kThreads = 2;

int parallel_region(int threads) {
  int seen = 0;
#pragma omp parallel num_threads(threads) reduction(+ : seen)
  { seen += 1; }
  return seen;
}

FORKCHECK_WORKER(gomp_child_region) {
  fc::channel::step_begin("the child's OpenMP parallel region (2 threads)");
  int seen = parallel_region(kThreads);
  fc::channel::step_end("the child's OpenMP parallel region (2 threads)");
  return {{"threads_in_region", seen}, {"pid", getpid()}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  nlohmann::json details;
  details["parent_threads_before_region"] = fc::launch::thread_count();
  details["parent_threads_in_region"] = parallel_region(kThreads);
  // libgomp keeps its pool thread parked after the region: this is what the fork child inherits.
  details["parent_threads_at_start"] = fc::launch::thread_count();
  fc::channel::send_details(details);
  auto workers = fc::start_pool(variant, "gomp_child_region", {nlohmann::json::object()});
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
}

std::vector<fc::VariantSpec> variants() {
  return {
      fc::hazard("fork", "fork", fc::Outcome::kHang,
                 "libgomp (GCC's OpenMP runtime) registers no atfork handler; the child's team "
                 "start waits for pool threads that were not copied by fork()",
                 "parent runs a 2-thread parallel region, forks, the child runs another"),
      fc::fix("spawn", "spawn", "a fresh exec starts with a fresh libgomp",
              "same parent; the worker is a fresh exec"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent's first parallel region, so its children "
              "never inherit a libgomp pool",
              "same parent; the worker is forked by a server started before any thread"),
  };
}

}  // namespace

FORKCHECK_CASE(gomp_fork_hang_case) {
  fc::CaseDef c;
  c.id = "gomp-fork-hang";
  c.title = "OpenMP (libgomp) parallel region in the parent, then fork: the child hangs";
  c.source_title = "Pytorch多进程睡死的大坑";
  c.source_author = "ZERO-A-ONE";
  c.source_doc = "003";
  c.reported =
      "A multiprocessing pool of PyTorch workers sleeps forever: the parent used OpenMP before "
      "fork(), and the child's OpenMP code never returns; GCC's docs say there is no workaround "
      "in the libgomp API.";
  c.mechanism =
      "libgomp keeps a thread pool after the first parallel region and has no pthread_atfork "
      "handling. fork() copies only the calling thread; the child's pool state still counts the "
      "parent's pool threads, so its next multi-threaded region waits on a futex that nobody will "
      "ever post.";
  c.platforms = "Linux (GCC/libgomp); any POSIX system using libgomp";
  c.variants = &variants;
  c.run = &run;
  return c;
}
