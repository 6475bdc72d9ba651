// static-init-fork (source 000, the Linux analogue of objc-initialize-fork): another thread is
// inside a function-local static's initialiser when the parent forks. The C++ ABI guards that
// initialisation (__cxa_guard_acquire/__cxa_guard_release); the fork child inherits the guard
// marked "in progress" but not the thread that would finish it, so the child's first use of the
// static waits on the guard's futex forever.
//
// To make the fork land inside the initialiser every time, the initialiser says it has started
// and then holds (standing for slow work: loading a model, a device library) until released.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace static_init_fork {

using fc::Outcome;

std::mutex g_mu;
std::condition_variable g_cv;
bool g_hold = false;  // set by the case's parent; a fresh process (spawn) never holds
bool g_started = false;
std::atomic<bool> g_constructed{false};

struct Registry {
  Registry() {
    std::unique_lock<std::mutex> lock(g_mu);
    g_started = true;
    g_cv.notify_all();
    g_cv.wait(lock, [] { return !g_hold; });
    g_constructed = true;
  }
  int value = 42;
};

Registry& registry() {
  static Registry r;  // the guarded initialisation
  return r;
}

void release_hold() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_hold = false;
  }
  g_cv.notify_all();
}

// The fix: a pthread_atfork prepare handler finishes the initialisation before fork() proceeds.
// Releasing the hold stands for the slow work ending by itself; touching the static then waits
// on the guard until the initialising thread has finished.
void initialise_before_fork() {
  release_hold();
  registry();
}

FORKCHECK_WORKER(static_init_child) {
  const bool constructed = g_constructed;
  fc::channel::step_begin("the child's first use of the function-local static");
  const int value = registry().value;
  fc::channel::step_end("the child's first use of the function-local static");
  return {{"pid", fc::launch::current_process_id()},
          {"value", value},
          {"constructed_when_worker_started", constructed}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  if (variant.name == "fork-init-in-atfork")
    fc::launch::at_fork(&initialise_before_fork, nullptr, nullptr);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_hold = true;
  }
  std::thread initialiser([] { registry(); });
  {
    std::unique_lock<std::mutex> lock(g_mu);
    g_cv.wait(lock, [] { return g_started; });
  }
  nlohmann::json details = {{"initialiser_in_progress_before_fork", !g_constructed.load()},
                            {"parent_threads_at_start", fc::launch::thread_count()}};
  fc::channel::send_details(details);
  auto workers = fc::start_pool(variant, "static_init_child", {nlohmann::json::object()});
  release_hold();  // after the fork: the parent's own initialisation completes normally
  initialiser.join();
  details["parent_value"] = registry().value;
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
}

std::vector<fc::VariantSpec> variants() {
  return {
      fc::hazard("fork", "fork", Outcome::kHang,
                 "libstdc++'s __cxa_guard_acquire waits on a futex for the initialising thread to "
                 "finish; fork() copied the guard's in-progress state but not that thread",
                 "a second thread is inside the static's initialiser at fork, held there until "
                 "the parent has forked (standing for slow work: in a real program the fork lands "
                 "there by chance); the child uses the static"),
      fc::fix("spawn", "spawn",
              "a fresh exec has its own, untouched guard: the worker runs the initialiser itself",
              "same parent; the worker is a fresh exec"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the initialiser thread existed: its children's guard "
              "is untouched",
              "same parent; the worker is forked by a server started before any thread"),
      fc::fix("fork-init-in-atfork", "fork",
              "a pthread_atfork prepare handler ends the initialiser's hold (standing for the slow "
              "work finishing by itself), then touches the static, which waits on the guard until "
              "the initialising thread has finished, before fork() runs: the child inherits a "
              "finished guard",
              "as `fork`, with a prepare handler that ends the hold and initialises the static "
              "before fork"),
  };
}

FORKCHECK_CASE(static_init_fork_case) {
  fc::CaseDef c;
  c.id = "static-init-fork";
  c.title =
      "A function-local static is being initialised by another thread at fork: the child hangs";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "On macOS, fork-started workers crash with \"+[MPSGraphObject initialize] may have been in "
      "progress in another thread when fork() was called\", or vanish silently in backward(). "
      "This is the same hazard in C++ on Linux: one-time initialisation interrupted by fork.";
  c.mechanism =
      "A function-local static is initialised once, under a guard variable (Itanium C++ ABI "
      "__cxa_guard_acquire/__cxa_guard_release). While one thread runs the initialiser, others "
      "wait on the guard (a futex in libstdc++). fork() copies the guard's in-progress state into "
      "the child without the thread that would complete it, so the child's first use of the "
      "static waits forever. This program holds its initialiser open until the parent has "
      "forked, so that the fork lands inside it every time; in a real program it lands there when "
      "the initialiser is slow (loading a model, a device library) and the timing is unlucky.";
  c.platforms =
      "any POSIX system with threads (Linux/libstdc++ verified); the macOS Objective-C "
      "runtime crashes instead (objc-initialize-fork)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"libc", "compiler", "start-methods"};
  return c;
}

}  // namespace static_init_fork
}  // namespace
