#include "harness/runner.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "harness/catalog.h"
#include "harness/classify.h"
#include "harness/plan.h"
#include "harness/supervisor.h"
#include "harness/usage_error.h"
#include "harness/version.h"
#include "reports/reporter.h"
#include "reports/run_log.h"

namespace fc::harness {
namespace {

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json platform() {
  utsname u{};
  ::uname(&u);
  return {{"os", u.sysname}, {"kernel", u.release}, {"machine", u.machine},
          {"cpus", ::sysconf(_SC_NPROCESSORS_ONLN)}};
}

Catalog catalog_or_die() {
  Catalog cat = load_catalog(repro_programs());
  for (const auto& e : cat.errors) std::cerr << "forkcheck: " << e << "\n";
  return cat;
}

// A variant's record in the run log: the planned variant plus what happened.
nlohmann::json variant_record(const std::string& case_id, const nlohmann::json& planned,
                              const ChildResult& r, const Classified& c) {
  nlohmann::json v = planned;
  v["type"] = "variant";
  v["case"] = case_id;
  v["outcome"] = to_string(c.outcome);
  v["message"] = c.message;
  v["duration_s"] = r.duration_s;
  v["exit"] = r.exit.to_json();
  v["stdout"] = r.out.text();
  v["stderr"] = r.err.text();
  v["output_bytes"] = {{"stdout", r.out.total_bytes()}, {"stderr", r.err.total_bytes()},
                       {"truncated", r.out.truncated() || r.err.truncated()}};
  v["details"] = c.details;
  v["steps"] = r.steps;
  v["watchdog"] = {{"deadline_passed", r.deadline_passed}, {"sigterm", r.sent_sigterm},
                   {"sigkill", r.sent_sigkill}, {"timeout_s", r.timeout_s},
                   {"leftovers_killed", r.leftovers_killed}};
  if (r.step_hang)
    v["hang"] = {{"pid", r.step_hang->pid}, {"step", r.step_hang->step},
                 {"within_s", r.step_hang->within_s}, {"waited_s", r.step_hang->waited_s}};
  v["stacks"] = nlohmann::json::array();
  // A hazard that did not bite is worth knowing, and the report says why, in every format.
  if (planned.value("role", "") == "hazard" && c.outcome == Outcome::kOk)
    v["note"] = "the hazard did not bite here: " + planned.value("expected_why", "");
  if (c.harness_error) v["harness_error"] = true;
  return v;
}

nlohmann::json skip_record(const std::string& case_id, const nlohmann::json& planned) {
  nlohmann::json v = planned;
  v["type"] = "variant";
  v["case"] = case_id;
  v["outcome"] = "skip";
  v["message"] = planned.value("skip_reason", "");
  v["duration_s"] = 0.0;
  v["exit"] = {{"code", nullptr}, {"signal", nullptr}};
  v["stdout"] = "";
  v["stderr"] = "";
  v["details"] = nlohmann::json::object();
  return v;
}

void progress(size_t done, size_t total, const nlohmann::json& v) {
  const bool matched = v["outcome"] == v["expected"];
  std::printf("[%2zu/%zu] %-22s %-20s %-6s (expected %-5s) %6.1fs  %s\n", done, total,
              v["case"].get<std::string>().c_str(), v["name"].get<std::string>().c_str(),
              v["outcome"].get<std::string>().c_str(), v["expected"].get<std::string>().c_str(),
              v["duration_s"].get<double>(),
              matched ? "as expected" : (v["role"] == "fix" ? "REGRESSION" : "differs"));
  std::fflush(stdout);
}

}  // namespace

void prepare_out_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create --out directory " + dir.string() + ": " + ec.message());
  auto probe = dir / (".forkcheck-write-test." + std::to_string(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) throw UsageError("--out directory " + dir.string() + " is not writable");
  std::fclose(f);
  std::filesystem::remove(probe, ec);
}

int list_cases() {
  Catalog cat = catalog_or_die();
  for (const auto& c : cat.cases) {
    std::printf("%-22s %s\n", c.value("id", "").c_str(), c.value("title", "").c_str());
    std::printf("%-22s source %s: %s (%s); applies to: %s\n", "",
                c["source"].value("document", "").c_str(), c["source"].value("title", "").c_str(),
                c["source"].value("author", "").c_str(), c.value("platforms", "").c_str());
    for (const auto& v : c["variants"])
      std::printf("%-22s   %-20s %-10s %-6s expects %s\n", "", v.value("name", "").c_str(),
                  v.value("start_method", "").c_str(), v.value("role", "").c_str(),
                  v.value("expected", "").c_str());
  }
  return cat.errors.empty() ? 0 : 1;
}

int run_cases(const RunOptions& options) {
  prepare_out_dir(options.out);
  Catalog cat = catalog_or_die();
  nlohmann::json cases = plan_cases(cat.cases, options.case_ids, options.only);

  reports::RunLog log(options.out / "run.jsonl");
  const auto t0 = std::chrono::steady_clock::now();
  log.append({{"type", "run"},
              {"schema_version", reports::kSchemaVersion},
              {"tool", {{"name", "forkcheck"}, {"version", kVersion}}},
              {"command", "run"},
              {"argv", options.argv},
              {"started_at", now_iso8601()},
              {"options", {{"timeout_s", options.timeout_s}, {"only", options.only},
                           {"jobs", options.jobs}}},
              {"platform", platform()},
              {"catalog_errors", cat.errors}});

  struct Planned {
    std::string case_id;
    nlohmann::json variant;
  };
  std::vector<Planned> runnable;
  std::vector<LaunchSpec> specs;
  size_t total = 0, done = 0;
  for (const auto& c : cases) {
    nlohmann::json line = c;
    line["type"] = "case";
    log.append(line);
    total += c["variants"].size();
  }
  for (const auto& c : cases) {
    for (const auto& v : c["variants"]) {
      if (v.value("expected", "") == "skip") {
        auto rec = skip_record(c["id"], v);
        log.append(rec);
        progress(++done, total, rec);
        continue;
      }
      LaunchSpec spec;
      spec.argv = {c.value("program", ""), "--run", c.value("id", ""), "--variant",
                   v.value("name", "")};
      spec.timeout_s = options.timeout_s;
      specs.push_back(spec);
      runnable.push_back({c["id"], v});
    }
  }

  Supervisor().run(specs, options.jobs, [&](size_t i, ChildResult&& r) {
    Classified cl = classify(r, /*expect_result=*/true);
    auto rec = variant_record(runnable[i].case_id, runnable[i].variant, r, cl);
    log.append(rec);
    progress(++done, total, rec);
  });

  log.append({{"type", "end"},
              {"finished_at", now_iso8601()},
              {"duration_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
              {"interrupted", false}});
  nlohmann::json report = reports::fold_run_log(reports::read_run_log(log.path()));
  auto written = reports::write_reports(report, options.out);

  const auto& s = report["summary"];
  std::printf("\n%d cases, %d variants:", s["cases"].get<int>(), s["variants"].get<int>());
  for (const auto& [verdict, n] : s["by_verdict"].items())
    std::printf(" %s %d,", verdict.c_str(), n.get<int>());
  std::printf(" harness failures %d\n", s["harness_failures"].get<int>());
  for (const auto& c : report["cases"])
    std::printf("  %-22s %-15s %s\n", c["id"].get<std::string>().c_str(),
                c["verdict"].get<std::string>().c_str(), c["verdict_reason"].get<std::string>().c_str());
  for (const auto& p : written) std::printf("wrote %s\n", p.c_str());
  return s["ok"].get<bool>() && cat.errors.empty() ? 0 : 1;
}

}  // namespace fc::harness
