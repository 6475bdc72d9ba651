#include "harness/commands/bench_command.h"

#include "harness/session/out_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "harness/base/exit_status_codes.h"
#include "harness/base/iso_time.h"
#include "harness/catalog/catalog.h"
#include "harness/session/run_session.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/supervisor.h"
#include "reports/reporter.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

// The Python peer script sits beside the repro programs (build tree and installed alike).
std::filesystem::path beside_me(const std::string& name) {
  return std::filesystem::path(native_repro_program()).parent_path() / name;
}

nlohmann::json run_repro_bench(int repeat, double timeout_s) {
  LaunchSpec spec;
  spec.argv = {beside_me("forkcheck-repro-torch").string(),
               "--bench",
               "--repeat",
               std::to_string(repeat),
               "--native-program",
               beside_me("forkcheck-repro").string()};
  spec.timeout_s = timeout_s;
  ChildResult r = supervise(spec);
  if (!r.result || !r.result->contains("bench"))
    throw std::runtime_error("the benchmark program failed: " + r.exit.describe() + " " +
                             r.err.last_lines(3));
  return (*r.result)["bench"];
}

// Python multiprocessing with torch imported, if some python3 here has torch.
nlohmann::json run_python_peer(int repeat, double timeout_s) {
  std::string why = "no python3 found";
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    LaunchSpec spec;
    spec.argv = {python, beside_me("forkcheck_bench_peer.py").string(), "--repeat",
                 std::to_string(repeat)};
    spec.timeout_s = timeout_s;
    spec.channel = false;
    spec.capture_cap = 1u << 20;
    ChildResult r = supervise(spec);
    if (!r.started) continue;
    auto j = nlohmann::json::parse(r.out.text(), nullptr, false);
    if (j.is_object() && j.value("available", false)) {
      j["interpreter"] = python;
      return j;
    }
    why = std::string(python) + ": " +
          (j.is_object() ? j.value("reason", "") : r.exit.describe() + " " + r.err.last_lines(2));
  }
  return {{"available", false}, {"reason", "not measured: " + why}};
}

void print_row(const char* label, const nlohmann::json& s) {
  if (s.is_null()) {
    std::printf("  %-34s %10s\n", label, "not measured");
    return;
  }
  std::printf("  %-34s %10.2f %10.2f %10.2f\n", label, s["median"].get<double>(),
              s["min"].get<double>(), s["max"].get<double>());
}

}  // namespace

nlohmann::json summarize_samples(const nlohmann::json& samples) {
  std::vector<double> v;
  for (const auto& x : samples) v.push_back(x.get<double>());
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {{"median", median}, {"min", v.front()}, {"max", v.back()}, {"n", n}};
}

int bench_command(const BenchOptions& options) {
  const std::filesystem::path dir = make_out_dir(options.out, "bench");
  install_interrupt_handlers();
  start_guardian();
  const double timeout_s = 120.0 + 30.0 * options.repeat;
  nlohmann::json raw = run_repro_bench(options.repeat, timeout_s);
  if (interrupted()) return interrupted_exit_status();
  nlohmann::json python = run_python_peer(options.repeat, timeout_s);
  if (interrupted()) return interrupted_exit_status();

  nlohmann::json out = {{"tool", "forkcheck bench"},
                        {"measured_at", now_iso8601()},
                        {"repeat", options.repeat},
                        {"parent_memory_kib", raw["parent_memory"]}};
  // The headline figures: a torch worker started from a parent that has libtorch loaded.
  for (const auto& [kind, methods] : raw["samples"].items()) {
    for (const auto& [method, s] : methods.items()) {
      out["workers"][kind][method] = {
          {"start_latency_ms", summarize_samples(s["start_latency_ms"])},
          {"rss_kib", summarize_samples(s["rss_kib"])},
          {"pss_kib", summarize_samples(s["pss_kib"])}};
    }
  }
  const std::string headline = raw["samples"].contains("torch") ? "torch" : "native";
  // A start method this platform lacks (Windows: fork, forkserver) has no samples: null here,
  // and raw["unavailable"] says why.
  for (const char* m : {"fork", "spawn", "forkserver"})
    out["start_latency_ms"][m] = out["workers"][headline].contains(m)
                                     ? out["workers"][headline][m]["start_latency_ms"]
                                     : nlohmann::json(nullptr);
  out["start_latency_ms"]["worker_kind"] = headline;
  out["peers"]["python"] = python;
  for (const char* m : {"fork", "spawn", "forkserver", "forkserver_preload_torch"}) {
    const bool have = python.value("available", false) && python["start_latency_ms"].contains(m);
    out["peers"][std::string("python_") + m] =
        have ? summarize_samples(python["start_latency_ms"][m]) : nlohmann::json(nullptr);
  }
  if (!python.value("available", false)) out["peers"]["not_measured"] = python["reason"];
  const auto& forkserver = out["start_latency_ms"]["forkserver"];
  auto over_forkserver = [&](const char* peer) {
    const auto& p = out["peers"][peer];
    return p.is_null() || forkserver.is_null()
               ? nlohmann::json(nullptr)
               : nlohmann::json(p["median"].get<double>() / forkserver["median"].get<double>());
  };
  out["ratios"]["python_spawn_over_forkserver"] = over_forkserver("python_spawn");
  // Like for like: both servers have torch loaded before they fork a worker.
  out["ratios"]["python_forkserver_over_forkserver"] = over_forkserver("python_forkserver");
  out["ratios"]["python_forkserver_preload_torch_over_forkserver"] =
      over_forkserver("python_forkserver_preload_torch");
  out["raw"] = raw;

  std::printf(
      "worker start latency, ms (from asking for a worker to its first line), %d runs each\n",
      options.repeat);
  std::printf("  %-34s %10s %10s %10s\n", "", "median", "min", "max");
  for (const auto& [kind, methods] : out["workers"].items())
    for (const char* m : {"fork", "spawn", "forkserver"}) {
      std::string label = "forkcheck " + std::string(m) + ", " + kind + " worker";
      print_row(label.c_str(),
                methods.contains(m) ? methods[m]["start_latency_ms"] : nlohmann::json(nullptr));
    }
  for (const char* m : {"fork", "spawn", "forkserver"}) {
    std::string label = "python multiprocessing " + std::string(m);
    print_row(label.c_str(), out["peers"][std::string("python_") + m]);
  }
  print_row("python forkserver, preload torch", out["peers"]["python_forkserver_preload_torch"]);
  if (!python.value("available", false))  // the reason may quote python's stderr
    std::printf("  (Python peer %s)\n", reports::terminal_safe(python.value("reason", "")).c_str());
  std::printf("\nworker memory, KiB (median RSS / PSS)\n");
  for (const auto& [kind, methods] : out["workers"].items())
    for (const char* m : {"fork", "spawn", "forkserver"})
      if (methods.contains(m)) {
        // null: this OS does not measure it (no PSS on macOS or Windows)
        // (A structured binding cannot be captured before C++20: its object is, by name.)
        const nlohmann::json& by_method = methods;
        auto median = [&](const char* what) {
          const auto& s = by_method[m][what];
          return s.is_null() ? std::string("not measured")
                             : std::to_string(std::lround(s["median"].get<double>()));
        };
        std::printf("  %-34s %10s %10s\n",
                    ("forkcheck " + std::string(m) + ", " + kind + " worker").c_str(),
                    median("rss_kib").c_str(), median("pss_kib").c_str());
      }
  std::printf("\n");
  for (const auto& [key, label] :
       {std::pair<const char*, const char*>{"python_spawn_over_forkserver", "Python spawn"},
        {"python_forkserver_over_forkserver", "Python forkserver (plain)"},
        {"python_forkserver_preload_torch_over_forkserver",
         "Python forkserver, torch preloaded (like for like)"}})
    if (!out["ratios"][key].is_null())
      std::printf("%s / forkcheck forkserver (median): %.1fx\n", label,
                  out["ratios"][key].get<double>());
  auto path = dir / "bench.json";
  reports::write_file_atomically(path, out.dump(2) + "\n");
  std::printf("wrote %s\n", path.u8string().c_str());  // a path is wide on Windows
  return exit_status::kOk;
}

}  // namespace fc::harness
