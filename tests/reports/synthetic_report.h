// A report (report.json's content) made up for the reporters' unit tests: every outcome, every
// kind of mismatch, text that needs escaping in every format, and the tiny NN's five workers with
// their loss curves.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::reports::testing {

inline nlohmann::json variant(const std::string& name, const std::string& method, const std::string& role,
                              const std::string& expected, const std::string& outcome,
                              const std::string& message = "") {
  return {{"name", name},
          {"start_method", method},
          {"role", role},
          {"expected", expected},
          {"expected_why", "because " + name},
          {"description", "variant " + name},
          {"skip_reason", expected == "skip" ? message : ""},
          {"outcome", outcome},
          {"matched", outcome == expected},
          {"message", message},
          {"duration_s", 1.25},
          {"exit", {{"code", 0}, {"signal", nullptr}}},
          {"stdout", ""},
          {"stderr", ""},
          {"details", nlohmann::json::object()},
          {"stacks", nlohmann::json::array()}};
}

inline nlohmann::json tiny_nn_workers(bool ok) {
  nlohmann::json workers = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    if (!ok) {
      workers.push_back({{"index", i}, {"pid", 100 + i}, {"status", "error"},
                         {"error", "Unable to handle autograd's threading in combination with fork-based multiprocessing."}});
      continue;
    }
    nlohmann::json losses = nlohmann::json::array();
    for (int s = 0; s < 60; ++s) losses.push_back(0.7 - 0.3 * (1.0 - 1.0 / (1.0 + 0.05 * s * (i + 1))));
    workers.push_back({{"index", i}, {"pid", 200 + i}, {"status", "ok"},
                       {"result", {{"message", "train finished"}, {"losses", losses}, {"param_norm", 3.5 + i * 0.01}}}});
  }
  return workers;
}

inline nlohmann::json synthetic_report() {
  using nlohmann::json;
  json hang = variant("fork", "fork", "hazard", "hang", "hang", "pid 7 entered <the region> & hung");
  hang["exit"] = {{"code", nullptr}, {"signal", 15}, {"signal_name", "SIGTERM"}};
  hang["stacks"] = json::array({{{"pid", 7}, {"tid", 7}, {"name", "forkcheck-repro"}, {"state", "S"},
                                 {"wchan", "futex_do_wait"}, {"frames", {"GOMP_parallel from libgomp.so.1", "main at x.cc:3"}}}});
  hang["stdout"] = "line with <b>tags</b> & \"quotes\" | pipes\x01\x1b[31m and a control char\n";
  json regression = variant("spawn", "spawn", "fix", "ok", "crash", "killed by SIGSEGV </failure><injected/>");
  regression["stderr"] = std::string("invalid utf-8: \xff\xfe end\n");
  json not_bitten = variant("fork-plain", "fork", "hazard", "error", "ok", "all workers finished");
  not_bitten["note"] = "the hazard did not bite here: no device";
  json harness_error = variant("forkserver", "forkserver", "fix", "ok", "error", "the case program failed");
  harness_error["harness_error"] = true;
  json skipped = variant("macos-only", "spawn", "hazard", "skip", "skip", "needs macOS");

  json spawn = variant("spawn", "spawn", "fix", "ok", "ok", "all 5 workers finished training; every loss went down");
  spawn["details"] = {{"workers", tiny_nn_workers(true)}};
  json fork = variant("fork-device-backend", "fork", "hazard", "error", "error",
                      "Unable to handle autograd's threading in combination with fork-based multiprocessing.");
  fork["details"] = {{"workers", tiny_nn_workers(false)}};

  auto make_case = [](const std::string& id, const std::string& verdict, json variants) {
    return json{{"id", id},
                {"title", "title of " + id + " <i>with markup</i>"},
                {"source", {{"title", "PyTorchのマルチプロセス"}, {"author", "M\u30fbW"}, {"document", "000"}}},
                {"reported", "the source saw *this* [x](y)"},
                {"mechanism", "because of `that`"},
                {"platforms", "Linux"},
                {"verdict", verdict},
                {"verdict_reason", "reason for " + verdict},
                {"variants", std::move(variants)}};
  };
  json cases = json::array({
      make_case("gomp-fork-hang", "regression", json::array({hang, regression, harness_error})),
      make_case("autograd-after-fork", "not-reproduced", json::array({not_bitten, skipped})),
      make_case("tiny-nn-spawn", "reproduced", json::array({spawn, fork})),
  });
  json environment = {
      {"collected_by", {{"program", "/x/forkcheck-repro-torch"}, {"pid", 1}}},
      {"os", {{"name", "Debian GNU/Linux 12 (bookworm)"}, {"sysname", "Linux"}, {"kernel", "6.1.0"}, {"machine", "x86_64"}}},
      {"libc", {{"name", "glibc"}, {"version", "2.36"}}},
      {"compiler", "GCC 12.2.0"},
      {"cpus", {{"online", 2}, {"affinity", 2}}},
      {"start_methods", {"fork", "spawn", "forkserver"}},
      {"ptrace_scope", {{"value", 1}, {"meaning", "restricted"}}},
      {"threads", {{"nproc", 2}, {"omp_get_max_threads", 2}}},
      {"cuda", {{"driver", nullptr}, {"summary", "no CUDA driver (libcuda.so.1 not found)"}}},
      {"libraries", json::array({{{"kind", "openmp"}, {"family", "libgomp (GNU)"}, {"path", "/lib/libgomp.so.1"}}})},
      {"openmp_runtimes", {"libgomp (GNU) libgomp.so.1.0.0"}},
      {"blas", json::array()},
      {"libtorch", {{"version", "1.13.0"}, {"config", "PyTorch built with:\n  - GCC 12.2\n"}, {"parallel_info", "ATen/Parallel:\n"}}},
  };
  return {{"schema_version", "1.0"},
          {"tool", {{"name", "forkcheck"}, {"version", "0.1.0"}}},
          {"run", {{"argv", {"forkcheck", "all"}}, {"started_at", "2026-01-01T00:00:00Z"}, {"duration_s", 12.5},
                   {"environment", environment}}},
          {"cases", cases},
          {"summary", {{"cases", 3}, {"variants", 7}, {"by_verdict", {{"regression", 1}, {"not-reproduced", 1}, {"reproduced", 1}}},
                       {"by_outcome", json::object()}, {"mismatches", 3}, {"regressions", 1}, {"harness_failures", 1}, {"ok", false}}}};
}

}  // namespace fc::reports::testing
