#include "core/bench.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkcheck/launch.h>

namespace fc::bench {

long long monotonic_ns() {
  // steady_clock is CLOCK_MONOTONIC with libstdc++ (and a machine-wide clock on macOS and
  // Windows): the same clock in every process, so a worker's first line compares with the
  // parent's request.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The worker that needs no torch: its first line records the time, nothing else.
FORKCHECK_WORKER(bench_native) {
  long long t = monotonic_ns();
  nlohmann::json r = memory_kib();
  r["first_line_ns"] = t;
  return r;
}

nlohmann::json run(int repeat, const std::string& native_program) {
  using launch::StartMethod;
  nlohmann::json samples = nlohmann::json::object();
  struct Kind {
    const char* name;
    const char* worker;
  };
  std::vector<Kind> kinds = {{"native", "bench_native"}};
  if (launch::find_worker("bench_torch")) kinds.insert(kinds.begin(), {"torch", "bench_torch"});
  // Only the start methods this platform has (Windows: spawn); the others say why not.
  std::vector<StartMethod> methods;
  nlohmann::json unavailable = nlohmann::json::object();
  for (auto method : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
    if (const char* why = launch::unavailable_reason(method))
      unavailable[launch::to_string(method)] = why;
    else
      methods.push_back(method);
  }
  for (const auto& kind : kinds) {
    for (auto method : methods) {
      launch::Launcher launcher(method);
      // A worker that needs no torch is spawned from a program that does not load it.
      if (method == StartMethod::kSpawn && std::string(kind.name) == "native")
        launcher.spawn_program(native_program);
      nlohmann::json latency = nlohmann::json::array(), rss = nlohmann::json::array(),
                     pss = nlohmann::json::array();
      for (int i = 0; i < repeat; ++i) {
        const long long asked = monotonic_ns();
        auto w = launcher.start(kind.worker, nlohmann::json::object());
        auto o = w.join(std::chrono::seconds(60));
        if (!o || o->status != launch::WorkerOutcome::Status::kOk)
          throw std::runtime_error(std::string("bench worker ") + kind.worker + " under " +
                                   launch::to_string(method) +
                                   " failed: " + (o ? o->error : "no end within 60 s"));
        latency.push_back(
            static_cast<double>(o->result.at("first_line_ns").get<long long>() - asked) / 1e6);
        // Only what this OS measures: no PSS on macOS or Windows, and then no samples (not 0).
        if (o->result.contains("rss_kib")) rss.push_back(o->result["rss_kib"]);
        if (o->result.contains("pss_kib")) pss.push_back(o->result["pss_kib"]);
      }
      samples[kind.name][launch::to_string(method)] = {
          {"start_latency_ms", latency}, {"rss_kib", rss}, {"pss_kib", pss}};
    }
  }
  nlohmann::json out = {{"repeat", repeat}, {"parent_memory", memory_kib()}, {"samples", samples}};
  if (!unavailable.empty()) out["unavailable"] = unavailable;
  return out;
}

}  // namespace fc::bench
