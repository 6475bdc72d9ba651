// Registers a worker, starts it under every start method this platform has, joins it, and shows
// what each method hands the worker: fork copies main()'s state, spawn and forkserver start from
// a clean one (a configuration set in main() is not there; pass it in the payload). Then starts
// it once more by the default method, which `forkcheck matrix` and `--start-method` set.
#include <forkcheck/launch.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace launch = fc::launch;

namespace {
int configured_threads = 0;  // set by main(): what a worker inherits, or not
}  // namespace

// The worker: runs in a child process; returns what it saw.
FORKCHECK_WORKER(square) {
  const int x = payload.at("x").get<int>();
  return {{"square", x * x}, {"configured_threads", configured_threads}};
}

int main(int argc, char** argv) {
  launch::init(argc, argv);  // first thing: a spawned worker runs here and exits
  // The forkserver is forked now, while this process has one thread and before main()'s set-up.
  if (!launch::unavailable_reason(launch::StartMethod::kForkserver)) launch::start_forkserver();
  configured_threads = 8;

  int failures = 0;
  for (auto method : {launch::StartMethod::kFork, launch::StartMethod::kSpawn,
                      launch::StartMethod::kForkserver}) {
    if (const char* why = launch::unavailable_reason(method)) {
      std::printf("%-10s  not on this platform: %s\n", launch::to_string(method), why);
      continue;
    }
    launch::Worker worker = launch::Launcher(method).start("square", {{"x", 7}});
    auto outcome = worker.join(std::chrono::seconds(30));
    if (!outcome) outcome = worker.terminate(std::chrono::seconds(1));
    if (outcome->status != launch::WorkerOutcome::Status::kOk) {
      std::printf("%-10s  %s: %s\n", launch::to_string(method), launch::to_string(outcome->status),
                  outcome->error.c_str());
      ++failures;
      continue;
    }
    const int seen = outcome->result.at("configured_threads").get<int>();
    const bool inherits = method == launch::StartMethod::kFork;
    std::printf(
        "%-10s  ok: square %d, configured_threads %d (%s)\n", launch::to_string(method),
        outcome->result.at("square").get<int>(), seen,
        inherits ? "fork copies main()'s state" : "a fresh process: main()'s set-up did not run");
    if (outcome->result.at("square") != 49 || seen != (inherits ? 8 : 0)) ++failures;
  }
  // get_context(): the default method, FORKCHECK_START_METHOD's when set (forkcheck exec
  // --start-method, forkcheck matrix), else Python 3.14's for this platform.
  const launch::Launcher by_default;
  launch::Worker worker = by_default.start("square", {{"x", 7}});
  auto outcome = worker.join(std::chrono::seconds(30));
  if (!outcome) outcome = worker.terminate(std::chrono::seconds(1));
  const bool ok = outcome->status == launch::WorkerOutcome::Status::kOk;
  std::printf(
      "default     %s: %s\n", launch::to_string(by_default.method()),
      ok ? ("ok: square " + outcome->result.at("square").dump()).c_str() : outcome->error.c_str());
  if (!ok) ++failures;
  return failures == 0 ? 0 : 1;
}
