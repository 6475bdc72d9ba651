// A report (report.json's content) made up for the reporters' unit tests: every outcome, every
// kind of mismatch, text that needs escaping in every format, what the watchdog saw of a process
// tree (blocked, still working at the deadline, exited by itself), and the tiny NN's five workers
// with their loss curves.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::reports::testing {

inline nlohmann::json variant(const std::string& name, const std::string& method,
                              const std::string& role, const std::string& expected,
                              const std::string& outcome, const std::string& message = "") {
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
      workers.push_back({{"index", i},
                         {"pid", 100 + i},
                         {"status", "error"},
                         {"error",
                          "Unable to handle autograd's threading in combination with fork-based "
                          "multiprocessing."}});
      continue;
    }
    nlohmann::json losses = nlohmann::json::array();
    for (int s = 0; s < 60; ++s)
      losses.push_back(0.7 - 0.3 * (1.0 - 1.0 / (1.0 + 0.05 * s * (i + 1))));
    workers.push_back(
        {{"index", i},
         {"pid", 200 + i},
         {"status", "ok"},
         {"result",
          {{"message", "train finished"}, {"losses", losses}, {"param_norm", 3.5 + i * 0.01}}}});
  }
  return workers;
}

// What the tiny NN's case puts beside its workers for the reports (details.tables and
// details.charts, as repros/core/detail_views.h writes them): a row and a loss curve per worker.
inline nlohmann::json with_worker_views(nlohmann::json details) {
  using nlohmann::json;
  json rows = json::array(), series = json::array();
  for (const auto& w : details["workers"]) {
    const json r = w.value("result", json::object());
    const json losses = r.value("losses", json::array());
    rows.push_back({{"cells",
                     {w["index"], w["pid"], w["status"] == "ok" ? r["message"] : w["error"],
                      losses.empty() ? json() : losses.front(),
                      losses.empty() ? json() : losses.back(), r.value("param_norm", json())}},
                    {"status", w["status"]}});
    if (!losses.empty())
      series.push_back({{"label", "worker " + w["index"].dump()}, {"y", losses}});
  }
  details["tables"] = {
      {{"title", "the workers"},
       {"columns", {"worker", "pid", "result", "first loss", "final loss", "param_norm"}},
       {"rows", rows}}};
  if (!series.empty())
    details["charts"] = {{{"title", "training loss of each worker"},
                          {"x_label", "step"},
                          {"y_label", "loss (BCE)"},
                          {"series", series}}};
  return details;
}

inline nlohmann::json synthetic_report() {
  using nlohmann::json;
  json hang =
      variant("fork", "fork", "hazard", "hang", "hang", "pid 7 entered <the region> & hung");
  hang["exit"] = {{"code", nullptr}, {"signal", 15}, {"signal_name", "SIGTERM"}};
  hang["stacks"] =
      json::array({{{"pid", 7},
                    {"tid", 7},
                    {"name", "forkcheck-repro"},
                    {"state", "S"},
                    {"wchan", "futex_do_wait"},
                    {"syscall", "futex"},
                    {"frames", {"GOMP_parallel from libgomp.so.1", "main at x.cc:3"}}}});
  hang["hang"] = {
      {"pid", 7}, {"step", "GOMP_parallel after fork"}, {"within_s", 1.5}, {"waited_s", 2.0}};
  hang["watchdog"] = {{"deadline_passed", false},
                      {"sigterm", true},
                      {"sigkill", false},
                      {"timeout_s", 60.0},
                      {"leftovers_killed", json::array()},
                      {"tree",
                       {{"state", "blocked"},
                        {"still_s", 3.2},
                        {"window_s", 1.0},
                        {"cpu_s_in_window", 0.0004},
                        {"cpu_s", 0.9},
                        {"processes", 3},
                        {"threads", 7},
                        {"longest_still_s", 3.2},
                        {"looks", 40}}},
                      {"deadline_to_end_s", 0.3}};
  hang["stdout"] = "line with <b>tags</b> & \"quotes\" | pipes\x01\x1b[31m and a control char\n";
  json regression =
      variant("spawn", "spawn", "fix", "ok", "crash", "killed by SIGSEGV </failure><injected/>");
  regression["stderr"] = std::string("invalid utf-8: \xff\xfe end\n");
  json not_bitten = variant("fork-plain", "fork", "hazard", "error", "ok", "all workers finished");
  not_bitten["note"] = "the hazard did not bite here: no device";
  json harness_error =
      variant("forkserver", "forkserver", "fix", "ok", "error", "the case program failed");
  harness_error["harness_error"] = true;
  json skipped = variant("macos-only", "spawn", "hazard", "skip", "skip", "needs macOS");

  // A hazard expected to hang that was still working when its deadline passed: not a hang.
  json busy = variant("fork-busy", "fork", "hazard", "hang", "timeout",
                      "the deadline (60 s) passed while it worked");
  busy["exit"] = {{"code", nullptr}, {"signal", 15}, {"signal_name", "SIGTERM"}};
  busy["watchdog"] = {{"deadline_passed", true},
                      {"sigterm", true},
                      {"sigkill", false},
                      {"timeout_s", 60.0},
                      {"leftovers_killed", json::array()},
                      {"tree",
                       {{"state", "working"},
                        {"still_s", 0.0},
                        {"window_s", 1.0},
                        {"cpu_s_in_window", 0.812},
                        {"cpu_s", 48.5},
                        {"processes", 2},
                        {"threads", 5},
                        {"longest_still_s", 0.4},
                        {"looks", 600}}},
                      {"deadline_to_end_s", 0.25}};
  busy["stacks"] = json::array({{{"pid", 9},
                                 {"tid", 10},
                                 {"name", "reader"},
                                 {"state", "S"},
                                 {"wchan", "pipe_read"},
                                 {"syscall", "read"},
                                 {"frames", {"read from libc.so.6", "main at busy.cc:7"}}}});
  // A fix whose child wrote nonsense on its channel.
  json channel = variant("spawn-channel", "spawn", "fix", "ok", "protocol-error",
                         "the channel carried a line that is not a message");
  channel["protocol_error"] = {{"line", "{\"type\":\"step\" <junk> & \\x01 | pipes"},
                               {"why", "not JSON: <unterminated> object"}};
  // A fix that ended on its own after its deadline, before forkcheck signalled it: its message
  // is its own, and then what the harness adds of the watchdog (reports::ended_by_itself_text).
  json late = variant("forkserver-late", "forkserver", "fix", "ok", "ok",
                      "finished, late (its 60.0 s deadline had passed, but it ended by itself "
                      "0.1 s later, before forkcheck signalled it: the outcome is that of its own "
                      "end)");
  late["watchdog"] = {{"deadline_passed", true},
                      {"called_for", "deadline"},
                      {"sigterm", false},
                      {"sigkill", false},
                      {"timeout_s", 60.0},
                      {"leftovers_killed", json::array()},
                      {"exited_by_itself", true},
                      {"deadline_to_end_s", 0.05},
                      {"tree",
                       {{"state", "working"},
                        {"still_s", 0.0},
                        {"window_s", 1.0},
                        {"cpu_s_in_window", 1.5},
                        {"cpu_s", 61.0},
                        {"processes", 1},
                        {"threads", 1},
                        {"longest_still_s", 0.0},
                        {"looks", 601}}}};

  json spawn = variant("spawn", "spawn", "fix", "ok", "ok",
                       "all 5 workers finished training; every loss went down");
  spawn["details"] = with_worker_views({{"workers", tiny_nn_workers(true)}});
  json fork = variant(
      "fork-device-backend", "fork", "hazard", "error", "error",
      "Unable to handle autograd's threading in combination with fork-based multiprocessing.");
  fork["details"] = with_worker_views({{"workers", tiny_nn_workers(false)}});

  auto make_case = [](const std::string& id, const std::string& verdict, json variants) {
    return json{
        {"id", id},
        {"title", "title of " + id + " <i>with markup</i>"},
        {"source",
         {{"title", "PyTorchのマルチプロセス"}, {"author", "M\u30fbW"}, {"document", "000"}}},
        {"reported", "the source saw *this* [x](y)"},
        {"mechanism", "because of `that`"},
        {"platforms", "Linux"},
        {"verdict", verdict},
        {"verdict_reason", "reason for " + verdict},
        {"variants", std::move(variants)}};
  };
  json cases = json::array({
      make_case("hang-case", "regression", json::array({hang, regression, harness_error})),
      make_case("unbitten-case", "not-reproduced", json::array({not_bitten, skipped})),
      make_case("curves-case", "reproduced", json::array({spawn, fork})),  // featured below
      make_case("watchdog-outcomes", "regression", json::array({busy, channel, late})),
  });
  cases[2]["featured"] = true;  // the case the reports lead with, as the catalog marks it
  json environment = {
      {"collected_by", {{"program", "/x/forkcheck-repro-torch"}, {"pid", 1}}},
      {"os",
       {{"name", "Debian GNU/Linux 12 (bookworm)"},
        {"sysname", "Linux"},
        {"kernel", "6.1.0"},
        {"machine", "x86_64"}}},
      {"libc", {{"name", "glibc"}, {"version", "2.36"}}},
      {"compiler", "GCC 12.2.0"},
      {"cpus", {{"online", 2}, {"affinity", 2}}},
      {"start_methods", {"fork", "spawn", "forkserver"}},
      {"ptrace_scope", {{"value", 1}, {"meaning", "restricted"}}},
      {"threads", {{"nproc", 2}, {"omp_get_max_threads", 2}}},
      {"cuda", {{"driver", nullptr}, {"summary", "no CUDA driver (libcuda.so.1 not found)"}}},
      {"libraries",
       json::array(
           {{{"kind", "openmp"}, {"family", "libgomp (GNU)"}, {"path", "/lib/libgomp.so.1"}}})},
      {"openmp_runtimes", {"libgomp (GNU) libgomp.so.1.0.0"}},
      {"blas", json::array()},
      {"libtorch",
       {{"version", "1.13.0"},
        {"config", "PyTorch built with:\n  - GCC 12.2\n"},
        {"parallel_info", "ATen/Parallel:\n"}}},
  };
  return {{"schema_version", "1.0"},
          {"tool", {{"name", "forkcheck"}, {"version", "0.1.0"}}},
          {"run",
           {{"argv", {"forkcheck", "all"}},
            {"started_at", "2026-01-01T00:00:00Z"},
            {"duration_s", 12.5},
            {"environment", environment}}},
          {"cases", cases},
          {"summary",
           {{"cases", 4},
            {"variants", 10},
            {"by_verdict", {{"regression", 2}, {"not-reproduced", 1}, {"reproduced", 1}}},
            {"by_outcome", json::object()},
            {"mismatches", 5},
            {"regressions", 2},
            {"harness_failures", 1},
            {"ok", false}}}};
}

// The synthetic report two hundred times over, each case's verdict and each variant's output,
// message and details 100 KiB: what a size cap must survive.
inline nlohmann::json huge_report() {
  nlohmann::json r = synthetic_report();
  const std::string flood(100 * 1024, 'x');
  nlohmann::json cases = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) {
    nlohmann::json c = r["cases"][i % 3];
    c["id"] = "case-" + std::to_string(i);
    c["verdict_reason"] = flood;
    for (auto& v : c["variants"]) {
      v["stdout"] = flood;
      v["stderr"] = flood;
      v["message"] = flood;
      v["details"]["blob"] = flood;
    }
    cases.push_back(c);
  }
  r["cases"] = cases;
  return r;
}

}  // namespace fc::reports::testing
