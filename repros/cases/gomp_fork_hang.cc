// gomp-fork-hang (source 003): the parent runs an OpenMP parallel region with libgomp, forks, and
// the child's next parallel region never returns. libgomp has no atfork handling: the child's
// copy of the thread pool still lists workers that do not exist in it, and the team start waits
// on a futex for them forever.
//
// Escapes under fork: omp_pause_resource_all(omp_pause_hard) before fork (libgomp frees its pool,
// so the child builds a new one), or one thread in the child (a 1-thread team never uses the
// pool). The runtime matrix: this file is also built into forkcheck-repro-libomp, linked against
// LLVM's libomp, which registers pthread_atfork handlers and survives fork unless
// KMP_INIT_AT_FORK=FALSE turns them off. Every variant records which runtime is really loaded.
#include <omp.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/libraries.h"
#include "core/pool.h"
#include "launch/process.h"

// Which OpenMP runtime this program was linked against, as the file name of its library starts
// (CMake sets it: "libgomp" with GCC, "libomp" for the libomp build and on macOS, "vcomp" with
// MSVC).
#ifndef FC_OPENMP_RUNTIME
#define FC_OPENMP_RUNTIME "libgomp"
#endif

namespace {
namespace gomp_fork_hang {

using fc::Outcome;

constexpr int kThreads = 2;
constexpr const char* kLibompProgram = "forkcheck-repro-libomp";

int parallel_region(int threads) {
  int seen = 0;
#pragma omp parallel num_threads(threads) reduction(+ : seen)
  { seen += 1; }
  return seen;
}

// Whether a library's file name is that of `runtime`: the name, then a version, a dot or a dash
// (libgomp.so.1, libgomp-1.dll, libomp.dylib, vcomp140.dll, libiomp5md.dll).
bool is_runtime(const std::string& path, const std::string& runtime) {
  const std::string file = fc::libraries::file_name_for_matching(path);
  if (file.rfind(runtime, 0) != 0 || file.size() == runtime.size()) return false;
  const char next = file[runtime.size()];
  return next == '.' || next == '-' || (next >= '0' && next <= '9');
}

// The OpenMP runtimes mapped into this process: the evidence of which one ran.
nlohmann::json loaded_openmp_runtimes() {
  nlohmann::json paths = nlohmann::json::array();
  for (const auto& path : fc::libraries::loaded())
    for (const char* runtime : {"libgomp", "libomp", "libiomp", "vcomp"})
      if (is_runtime(path, runtime)) paths.push_back(path);
  return paths;
}

// Old runtimes lack omp_pause_resource_all (OpenMP 5.0; libgomp since GCC 10; MSVC's has only
// OpenMP 2.0), so it is looked up, not linked, and declared here rather than through omp.h's
// omp_pause_resource_t, which such runtimes' headers lack. omp_pause_hard is 2 in the standard.
using PauseAllFn = int (*)(int);
constexpr int kOmpPauseHard = 2;
PauseAllFn pause_resource_all() {
  return fc::libraries::as_function<PauseAllFn>(
      fc::libraries::any_symbol("omp_pause_resource_all"));
}

// This program is linked against LLVM's libomp and runs the libomp variants itself: where libomp
// is the platform's OpenMP runtime (macOS), not the separate forkcheck-repro-libomp of a libgomp
// platform (which CMake marks with FC_LIBOMP_VARIANTS_PROGRAM; its variants keep naming it).
bool libomp_is_this_program() {
#ifdef FC_LIBOMP_VARIANTS_PROGRAM
  return false;
#else
  return std::string(FC_OPENMP_RUNTIME) == "libomp";
#endif
}

FORKCHECK_WORKER(gomp_child_region) {
  const int threads = payload.value("threads", kThreads);
  if (threads == 1) omp_set_num_threads(1);
  const std::string step = "the child's OpenMP parallel region (" + std::to_string(threads) +
                           (threads == 1 ? " thread)" : " threads)");
  fc::channel::step_begin(step.c_str());
  int seen = parallel_region(threads);
  fc::channel::step_end(step.c_str());
  return {{"threads_in_region", seen},
          {"pid", fc::launch::current_process_id()},
          {"openmp_runtimes", loaded_openmp_runtimes()}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  nlohmann::json details;
  // The runtime the variant claims must be the one loaded, or its outcome says nothing.
  std::string claimed = FC_OPENMP_RUNTIME;
  if (variant.program == kLibompProgram) claimed = "libomp";
  details["openmp_runtime_claimed"] = claimed;
  details["openmp_runtime_built_for"] = FC_OPENMP_RUNTIME;
  details["openmp_runtimes_loaded"] = loaded_openmp_runtimes();
  bool claimed_loaded = false, other_loaded = false;
  for (const auto& p : details["openmp_runtimes_loaded"])
    (is_runtime(p.get<std::string>(), claimed) ? claimed_loaded : other_loaded) = true;
  if (!claimed_loaded || other_loaded)
    return {Outcome::kError,
            "variant " + variant.name + " claims " + claimed + " but this process loaded " +
                details["openmp_runtimes_loaded"].dump(),
            details};

  details["parent_threads_before_region"] = fc::launch::thread_count();
  details["parent_threads_in_region"] = parallel_region(kThreads);
  // The runtime keeps its pool threads parked after the region: fork copies their state, not them.
  details["parent_threads_after_region"] = fc::launch::thread_count();
  if (variant.name == "fork-pause-resource") {
    PauseAllFn pause = pause_resource_all();
    if (!pause) return {Outcome::kError, "omp_pause_resource_all is not exported here", details};
    details["omp_pause_resource_all_returned"] = pause(kOmpPauseHard);
    details["parent_threads_after_pause"] = fc::launch::thread_count();
  }
  fc::channel::send_details(details);
  const int child_threads = variant.name == "fork-one-thread-in-child" ? 1 : kThreads;
  auto workers = fc::start_pool(variant, "gomp_child_region", {{{"threads", child_threads}}});
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
}

// Why the libomp variants cannot run here, or "" when they can (decided at --list time).
std::string libomp_program_missing() {
#ifndef FC_HAVE_LIBOMP_PROGRAM
  if (std::string(FC_OPENMP_RUNTIME) != "libomp")
    return std::string(kLibompProgram) +
           " was not built: CMake found no LLVM libomp (Debian: libomp-dev)";
#endif
  std::error_code ec;
  const auto self = std::filesystem::u8path(fc::launch::self_executable_path());
  auto program = self.parent_path() / kLibompProgram;
  if (self.empty() || !std::filesystem::exists(program, ec))
    return program.string() + " not found beside this program: build the target " + kLibompProgram;
  return "";
}

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kHang,
                 "libgomp (GCC's OpenMP runtime) registers no atfork handler; the child's team "
                 "start waits for pool threads that were not copied by fork()",
                 "parent runs a 2-thread parallel region, forks, the child runs another"),
      fc::fix("spawn", "spawn",
              std::string("a fresh exec starts with a fresh OpenMP runtime (") + FC_OPENMP_RUNTIME +
                  ")",
              "same parent; the worker is a fresh exec"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent's first parallel region, so its children "
              "never inherit an OpenMP pool",
              "same parent; the worker is forked by a server started before any thread"),
      fc::fix("fork-pause-resource", "fork",
              "omp_pause_resource_all(omp_pause_hard) makes libgomp free its thread pool, whose "
              "threads exit: the child inherits no pool and builds a new one",
              "as `fork`, the parent calls omp_pause_resource_all(omp_pause_hard) before forking"),
      fc::fix("fork-one-thread-in-child", "fork",
              "a 1-thread team returns before libgomp touches the inherited pool",
              "as `fork`, the child calls omp_set_num_threads(1) and runs a 1-thread region"),
      fc::fix("fork-libomp", "fork",
              "LLVM's libomp registers pthread_atfork handlers (KMP_INIT_AT_FORK defaults to "
              "TRUE): the child handler resets the runtime, which starts afresh in the child",
              "as `fork`, the program linked against LLVM's libomp instead of libgomp")
          .run_by(kLibompProgram),
      fc::hazard("fork-libomp-no-atfork", "fork", Outcome::kHang,
                 "KMP_INIT_AT_FORK=FALSE stops libomp from registering its atfork handlers: the "
                 "child inherits a team whose threads do not exist and waits for them at the "
                 "region's barrier, as with libgomp",
                 "as `fork-libomp`, with KMP_INIT_AT_FORK=FALSE in the environment from exec")
          .run_by(kLibompProgram)
          .with_env("KMP_INIT_AT_FORK", "FALSE"),
  };
  if (!pause_resource_all())
    v[3].skip(
        "omp_pause_resource_all is not exported by the loaded OpenMP runtime (OpenMP 5.0; "
        "libgomp has it since GCC 10)");
  if (libomp_is_this_program()) {
    // libomp is this program's own runtime (macOS): `fork` shows what libomp does, and the
    // libomp variants need no other program.
    v[0].expected = Outcome::kOk;
    v[0].expected_why =
        "this program's OpenMP runtime is LLVM's libomp (on macOS, the one PyTorch's wheel "
        "ships), not libgomp: its atfork child handler resets the runtime, which starts afresh "
        "in the child; fork-libomp-no-atfork shows libgomp's hang with libomp";
    v[5].skip("this program is itself linked against libomp: here `fork` is this variant");
    v[6].program.clear();
    return v;
  }
  const std::string missing = libomp_program_missing();
  if (!missing.empty())
    for (auto& s : v)
      if (s.program == kLibompProgram) s.skip(missing);
  return v;
}

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
      "ever post. LLVM's libomp resets itself in an atfork child handler instead.";
  c.platforms =
      "Linux (GCC/libgomp); any POSIX system using libgomp, or libomp with "
      "KMP_INIT_AT_FORK=FALSE";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"openmp", "omp-threads", "openmp-vars", "cpus", "start-methods"};
  return c;
}

}  // namespace gomp_fork_hang
}  // namespace
