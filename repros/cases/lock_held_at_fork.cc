// lock-held-at-fork (python/cpython#50970, bpo-6721): a background thread of the parent (here a
// metrics flusher writing to the log) holds the log's mutex at the moment another thread forks.
// fork() copies the mutex, locked, into the child but not the thread that would unlock it, so the
// child's first log line waits on it forever. The general form of gomp-fork-hang and
// static-init-fork; CPython 3.12 warns on fork in a multi-threaded process for this reason.
//
// In a real program the fork lands inside the flusher's critical section by chance, now and then.
// Here a handshake makes it land there every time: the flusher takes the log mutex, says so, and
// holds it until the parent releases it, which the parent does only after fork() returned.
//
// Fixes: spawn (a fresh process, its own unlocked mutex); forkserver (forked before the flusher
// existed); a pthread_atfork handler that takes the mutex in prepare (waiting for the flusher to
// leave) and releases it in parent and child; re-initialising the mutex in the child (what
// Python's logging does with its handlers' locks).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace lock_held_at_fork {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 2;

// The log: one mutex around a sink. The child handler of the re-initialising fix points the log at
// a fresh mutex (the inherited one stays locked and unused, as CPython leaks the old lock).
std::mutex g_log_mutex_inherited;
std::mutex g_log_mutex_fresh;
std::mutex* g_log_mutex = &g_log_mutex_inherited;
char g_sink[4096];  // stands for the log file: no allocation, no stdio lock in the child
std::size_t g_sink_used = 0;
int g_lines_logged = 0;

int log_line(const char* text) {
  std::lock_guard<std::mutex> lock(*g_log_mutex);
  if (g_sink_used >= sizeof g_sink) g_sink_used = 0;
  const int n = std::snprintf(g_sink + g_sink_used, sizeof g_sink - g_sink_used, "%s\n", text);
  if (n > 0) g_sink_used = std::min(sizeof g_sink, g_sink_used + static_cast<std::size_t>(n));
  return ++g_lines_logged;
}

// The flusher's schedule, on a mutex of its own: inside (holding the log mutex), then allowed to
// leave, then gone (the log mutex released).
std::mutex g_mu;
std::condition_variable g_cv;
bool g_inside = false;
bool g_may_leave = false;
bool g_left = false;

void flusher() {
  std::lock_guard<std::mutex> log(*g_log_mutex);  // a flush, under the log's mutex
  std::unique_lock<std::mutex> lock(g_mu);
  g_inside = true;
  g_cv.notify_all();
  g_cv.wait(lock, [] { return g_may_leave; });
  g_left = true;  // set while the log mutex is still held: read by the parent only after it
}

void let_flusher_leave() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_may_leave = true;
  }
  g_cv.notify_all();
}

// The pthread_atfork fix. prepare: the flush ends by itself in a real program; here the hold is
// released (the stand-in for that), then the log mutex is taken, which waits until the flusher
// has left its critical section. The forking thread now holds it: unlocking it in the parent and
// in the child is well-defined.
void prepare_take_log_mutex() {
  let_flusher_leave();
  g_log_mutex->lock();
}
void parent_release_log_mutex() { g_log_mutex->unlock(); }
void child_release_log_mutex() { g_log_mutex->unlock(); }

// The re-initialising fix: the child logs through a fresh mutex.
void child_reinit_log_mutex() { g_log_mutex = &g_log_mutex_fresh; }

FORKCHECK_WORKER(log_child) {
  bool flusher_had_left;
  {
    std::lock_guard<std::mutex> lock(g_mu);  // not held by anyone at fork: see run()
    flusher_had_left = g_left;
  }
  fc::channel::step_begin("the child's first log line");
  const int lines = log_line("worker started");
  fc::channel::step_end("the child's first log line");
  return {{"worker", payload.at("worker")},
          {"pid", fc::launch::current_process_id()},
          {"lines_logged", lines},
          {"flusher_had_left_at_fork", flusher_had_left},
          {"log_mutex_reinitialised", g_log_mutex == &g_log_mutex_fresh}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  if (variant.name == "fork-atfork-handler")
    fc::launch::at_fork(&prepare_take_log_mutex, &parent_release_log_mutex,
                        &child_release_log_mutex);
  if (variant.name == "fork-reinit-in-child")
    fc::launch::at_fork(nullptr, nullptr, &child_reinit_log_mutex);
  std::thread thread(&flusher);
  {
    std::unique_lock<std::mutex> lock(g_mu);
    g_cv.wait(lock, [] { return g_inside; });
  }  // g_mu is free again before fork: the flusher waits on g_cv, which releases it
  // The log mutex is held by the flusher now (try_lock from this thread fails).
  const bool held = !g_log_mutex->try_lock();
  if (!held) g_log_mutex->unlock();
  json details = {{"log_mutex_held_by_flusher_before_fork", held},
                  {"parent_threads_before_fork", fc::launch::thread_count()}};
  fc::channel::send_details(details);
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i) payloads.push_back({{"worker", i}});
  auto workers = fc::start_pool(variant, "log_child", payloads);
  let_flusher_leave();  // after the fork: in the parent the flush ends normally
  thread.join();
  details["parent_lines_logged"] = log_line("parent: workers started");
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
}

std::vector<fc::VariantSpec> variants() {
  return {
      fc::hazard("fork", "fork", Outcome::kHang,
                 "fork() copies the locked mutex (a glibc futex word) into the child but not the "
                 "flusher thread that owns it; nothing in the child will ever unlock it",
                 "a flusher thread holds the log mutex at fork (a handshake puts the fork there "
                 "every time; in a real program it lands there by chance); 2 fork workers each "
                 "log a line"),
      fc::fix("spawn", "spawn",
              "a fresh exec has its own log mutex, unlocked, and no flusher thread",
              "same parent; the workers are fresh execs"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the flusher thread existed: its children's mutex "
              "was never locked",
              "same parent; the workers are forked by a server started before any thread"),
      fc::fix("fork-atfork-handler", "fork",
              "a pthread_atfork prepare handler takes the log mutex, so fork() waits until the "
              "flusher has left its critical section; the parent and child handlers release it",
              "as `fork`, with prepare/parent/child handlers around the log mutex (the prepare "
              "handler also ends the flusher's hold, standing for the flush finishing by itself)"),
      fc::fix("fork-reinit-in-child", "fork",
              "a pthread_atfork child handler points the log at a fresh, unlocked mutex (what "
              "CPython's logging does for its handlers' locks since bpo-6721/bpo-36533); the "
              "flusher's half-done flush is not finished in the child, only no longer waited for",
              "as `fork`, with a child handler that re-initialises the log mutex"),
  };
}

FORKCHECK_CASE(lock_held_at_fork_case) {
  fc::CaseDef c;
  c.id = "lock-held-at-fork";
  c.title = "A background thread holds the log mutex at fork: the child's first log line hangs";
  c.source_title = "Locks in the standard library should be sanitized on fork";
  c.source_author = "gpshead (python/cpython#50970, bpo-6721)";
  c.source_doc = "";
  c.source_url = "https://github.com/python/cpython/issues/50970";
  c.reported =
      "A lock that another thread holds when the process forks stays held in the child, where "
      "that thread does not exist, and the child deadlocks on its first use of it; the standard "
      "library's locks, logging's first, should "
      "be made safe at fork. Logging took its locks around fork from 3.7 (#4071), then "
      "reinitialised its handlers' locks in the child instead (bpo-36533); Python 3.12 warns on "
      "every fork of a multi-threaded process (gh-100228).";
  c.mechanism =
      "fork() copies the whole address space, every mutex in whatever state it is in, but only the "
      "calling thread. A mutex locked by another thread at that instant is locked in the child "
      "with no owner left to unlock it; the child's first attempt to take it blocks forever. "
      "pthread_atfork handlers can take such a lock before fork and release it on both sides; "
      "spawn and forkserver start from a process with no such threads.";
  c.platforms =
      "every POSIX system with threads (glibc verified); Windows has no fork (the fork variants "
      "are skipped there)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"libc", "start-methods"};
  c.shows_as = {"stuck:lock", "stuck:locks"};
  return c;
}

}  // namespace lock_held_at_fork
}  // namespace
