// Smoke test of the native repro program on Windows (forkcheck-repro.exe, cross-built by
// ci/check-win32-cross.sh and run under wine): what `forkcheck all` would do with it, without the
// rest of the harness. Each run goes through the job-object supervisor with the channel:
//   --list   the catalog: every fork and forkserver variant is skipped with the central reason,
//            and the spawn variants of the cases that apply on Windows are not;
//   --env    the environment fingerprint comes back on the channel and says Windows, spawn only;
//   --run    every variant the catalog does not skip, its outcome compared with the expectation
//            it declared; a spawned worker's step announcements reach the channel too (the
//            handle is inherited by the workers, channel_win32.cc).
// Usage: repro_smoke FORKCHECK_REPRO_EXE
#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"
#include "smoke_check.h"

namespace {

using fc::harness::ChildResult;
using fc::harness::LaunchSpec;
using nlohmann::json;

using fc::smoke::check;
using fc::smoke::contains;
using fc::smoke::failures;

ChildResult run(const std::string& program, std::initializer_list<std::string> args) {
  LaunchSpec s;
  s.argv = {program};
  s.argv.insert(s.argv.end(), args);
  s.timeout_s = 120;  // wine starts slowly, and some variants spawn four workers
  s.grace_s = 1;
  s.capture_cap = 1 << 20;
  return fc::harness::supervise(s);
}

// Why a run went wrong, for the log.
std::string why(const ChildResult& r) {
  return r.start_error + " " + r.exit.describe() + "; stderr: " + r.err.text().substr(0, 2000);
}

json list_catalog(const std::string& program) {
  ChildResult r = run(program, {"--list"});
  json catalog = json::parse(r.out.text(), nullptr, /*allow_exceptions=*/false);
  check(r.exit.exited_ok() && catalog.is_object() && catalog.contains("cases"), "--list: a catalog",
        why(r));
  if (!catalog.is_object() || !catalog.contains("cases")) return json::object();

  std::set<std::string> runnable;
  bool every_fork_skipped = true;
  for (const auto& c : catalog["cases"])
    for (const auto& v : c["variants"]) {
      const std::string method = v.value("start_method", "");
      const std::string id = c.value("id", "") + "/" + v.value("name", "");
      if ((method == "fork" || method == "forkserver") &&
          (v.value("expected", "") != "skip" ||
           !contains(v.value("skip_reason", ""), "Windows has no fork()"))) {
        every_fork_skipped = false;
        check(false, "--list: " + id + " is skipped for want of fork()", v.dump());
      }
      if (v.value("expected", "") != "skip") runnable.insert(id);
    }
  check(every_fork_skipped, "--list: every fork and forkserver variant is skipped, saying why");
  for (const char* id :
       {"gomp-fork-hang/spawn", "static-init-fork/spawn", "global-config-spawn/spawn",
        "state-not-shared/spawn-shared-memory", "socket-handle-spawn/spawn-factory"})
    check(runnable.count(id) == 1, std::string("--list: ") + id + " runs on Windows");
  check(runnable.count("graceful-shutdown/spawn") == 0,
        "--list: graceful-shutdown is skipped (no SIGTERM on Windows)");
  return catalog;
}

void environment(const std::string& program) {
  ChildResult r = run(program, {"--env"});
  const json env = r.result ? r.result->value("environment", json::object()) : json::object();
  check(r.exit.exited_ok() && !env.empty(), "--env: the fingerprint came on the channel", why(r));
  if (env.empty()) return;
  check(env["os"].value("sysname", "") == "Windows", "--env: os says Windows", env["os"].dump());
  check(env["start_methods"] == json::array({"spawn"}), "--env: spawn is the one start method",
        env["start_methods"].dump());
  check(env["cpus"].value("online", 0) >= 1, "--env: CPUs counted", env["cpus"].dump());
  check(!env["openmp_runtimes"].empty(), "--env: the OpenMP runtime is among the loaded modules",
        env["libraries"].dump());
}

void variants(const std::string& program, const json& catalog) {
  for (const auto& c : catalog["cases"])
    for (const auto& v : c["variants"]) {
      if (v.value("expected", "") == "skip") continue;
      const std::string id = c.value("id", "") + "/" + v.value("name", "");
      ChildResult r = run(program, {"--run", c.value("id", ""), "--variant", v.value("name", "")});
      const std::string outcome = r.result ? r.result->value("outcome", "?") : "no result";
      const std::string message = r.result ? r.result->value("message", "") : why(r);
      check(r.exit.exited_ok() && outcome == v.value("expected", ""),
            id + ": " + outcome + " as expected",
            "expected " + v.value("expected", "") + ", got " + outcome + ": " + message);
      if (id != "gomp-fork-hang/spawn") continue;
      // The worker announced its parallel region on the channel it inherited.
      bool worker_step = false;
      for (const auto& s : r.steps)
        worker_step =
            worker_step || (s.value("pid", 0) != r.pid && s.value("event", "") == "begin");
      check(worker_step, id + ": the spawned worker's step came through the channel",
            r.steps.dump());
    }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FORKCHECK_REPRO_EXE\n", argv[0]);
    return 2;
  }
  const json catalog = list_catalog(argv[1]);
  environment(argv[1]);
  if (catalog.contains("cases")) variants(argv[1], catalog);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
