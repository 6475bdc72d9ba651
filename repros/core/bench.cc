#include "core/bench.h"

#include <time.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "launch/launch.h"

namespace fc::bench {

long long monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

nlohmann::json memory_kib() {
  std::ifstream in("/proc/self/smaps_rollup");
  nlohmann::json m = nlohmann::json::object();
  std::string key;
  long long value;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    if (!(s >> key >> value)) continue;
    if (key == "Rss:") m["rss_kib"] = value;
    if (key == "Pss:") m["pss_kib"] = value;
  }
  return m;
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
  for (const auto& kind : kinds) {
    for (auto method : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
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
                                   launch::to_string(method) + " failed: " +
                                   (o ? o->error : "no end within 60 s"));
        latency.push_back(static_cast<double>(o->result.at("first_line_ns").get<long long>() - asked) / 1e6);
        rss.push_back(o->result.value("rss_kib", 0));
        pss.push_back(o->result.value("pss_kib", 0));
      }
      samples[kind.name][launch::to_string(method)] = {
          {"start_latency_ms", latency}, {"rss_kib", rss}, {"pss_kib", pss}};
    }
  }
  return {{"repeat", repeat}, {"parent_memory", memory_kib()}, {"samples", samples}};
}

}  // namespace fc::bench
