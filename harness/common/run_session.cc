#include "harness/common/run_session.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "harness/common/environment_probe.h"
#include "harness/platform/host.h"
#include "harness/platform/zygote.h"
#include "harness/version.h"
#include "reports/reporter.h"

namespace fc::harness {
namespace {

double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json base_record(const std::string& case_id, const nlohmann::json& planned) {
  nlohmann::json v = planned;
  v["type"] = "variant";
  v["case"] = case_id;
  return v;
}

}  // namespace

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

RunSession::RunSession(const std::filesystem::path& out, nlohmann::json header, Zygotes* zygotes)
    : out_(out), log_(out / "run.jsonl"), started_(monotonic_s()) {
  header["type"] = "run";
  header["schema_version"] = reports::kSchemaVersion;
  header["tool"] = {{"name", "forkcheck"}, {"version", kVersion}};
  header["started_at"] = now_iso8601();
  header["platform"] = host_platform();
  header["environment"] = collect_environment(60, zygotes);  // from a repro program: see environment_probe.h
  log_.append(header);
}

void RunSession::add_case(const nlohmann::json& planned_case) {
  nlohmann::json line = planned_case;
  line["type"] = "case";
  log_.append(line);
}

void RunSession::add_result(const std::string& case_id, const nlohmann::json& planned,
                            const ChildResult& r, const Classified& c) {
  nlohmann::json v = base_record(case_id, planned);
  v["outcome"] = to_string(c.outcome);
  v["message"] = c.message;
  v["duration_s"] = r.duration_s;
  if (!r.started_via.empty()) v["started_via"] = r.started_via;
  if (!r.start_note.empty()) v["start_note"] = r.start_note;
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
  v["stacks"] = to_json(r.stacks);
  if (!r.stacks.method.empty()) v["stacks_method"] = r.stacks.method;
  if (!r.stacks.note.empty()) v["stacks_note"] = r.stacks.note;
  // A hazard that did not bite is worth knowing, and the report says why, in every format.
  if (planned.value("role", "") == "hazard" && c.outcome == Outcome::kOk)
    v["note"] = "the hazard did not bite here: " + planned.value("expected_why", "");
  if (c.harness_error) v["harness_error"] = true;
  append_variant(v);
}

void RunSession::add_skip(const std::string& case_id, const nlohmann::json& planned) {
  nlohmann::json v = base_record(case_id, planned);
  v["outcome"] = "skip";
  v["message"] = planned.value("skip_reason", "");
  v["duration_s"] = 0.0;
  v["exit"] = {{"code", nullptr}, {"signal", nullptr}};
  v["stdout"] = "";
  v["stderr"] = "";
  v["details"] = nlohmann::json::object();
  v["stacks"] = nlohmann::json::array();
  append_variant(v);
}

void RunSession::add_interrupted(const std::string& case_id, const nlohmann::json& planned,
                                 const ChildResult& r) {
  nlohmann::json v = base_record(case_id, planned);
  char buf[160];
  if (r.started)
    std::snprintf(buf, sizeof buf,
                  "not finished: forkcheck was interrupted by %s after %.1f s and killed it",
                  signal_name(r.interrupted_by).c_str(), r.duration_s);
  else
    std::snprintf(buf, sizeof buf, "not run: forkcheck was interrupted by %s before it started",
                  signal_name(r.interrupted_by).c_str());
  v["outcome"] = "skip";
  v["message"] = buf;
  v["interrupted"] = true;
  v["duration_s"] = r.duration_s;
  if (!r.started_via.empty()) v["started_via"] = r.started_via;
  if (!r.start_note.empty()) v["start_note"] = r.start_note;
  v["exit"] = r.exit.to_json();
  v["stdout"] = r.out.text();
  v["stderr"] = r.err.text();
  v["details"] = r.early_details;
  v["stacks"] = nlohmann::json::array();
  append_variant(v);
}

void RunSession::append_variant(const nlohmann::json& v) {
  log_.append(v);
  ++done_;
  const bool matched = v["outcome"] == v["expected"];
  std::printf("[%2zu/%zu] %-22s %-20s %-6s (expected %-5s) %6.1fs  %s\n", done_,
              std::max(total_, done_), v["case"].get<std::string>().c_str(),
              v["name"].get<std::string>().c_str(), v["outcome"].get<std::string>().c_str(),
              v["expected"].get<std::string>().c_str(), v["duration_s"].get<double>(),
              matched                       ? "as expected"
              : v.value("role", "") == "fix" ? "REGRESSION"
              : v.value("role", "") == "subject" ? "FAILED"
                                                 : "differs");
  if (!matched || v["outcome"] != "ok") {
    std::string m = v.value("message", "");
    if (m.size() > 300) m = m.substr(0, 300) + "...";
    std::printf("        %s\n", m.c_str());
  }
  std::fflush(stdout);
}

nlohmann::json RunSession::finish(bool interrupted) {
  log_.append({{"type", "end"},
               {"finished_at", now_iso8601()},
               {"duration_s", monotonic_s() - started_},
               {"interrupted", interrupted}});
  nlohmann::json report = reports::fold_run_log(reports::read_run_log(log_.path()));
  auto written = reports::write_reports(report, out_);

  const auto& s = report["summary"];
  std::printf("\n%d cases, %d variants:", s["cases"].get<int>(), s["variants"].get<int>());
  for (const auto& [verdict, n] : s["by_verdict"].items())
    std::printf(" %s %d,", verdict.c_str(), n.get<int>());
  std::printf(" harness failures %d%s\n", s["harness_failures"].get<int>(),
              interrupted ? " (INTERRUPTED: a partial report)" : "");
  for (const auto& c : report["cases"])
    std::printf("  %-22s %-15s %s\n", c["id"].get<std::string>().c_str(),
                c["verdict"].get<std::string>().c_str(),
                c["verdict_reason"].get<std::string>().c_str());
  for (const auto& p : written) std::printf("wrote %s\n", p.string().c_str());
  std::fflush(stdout);
  return report;
}

}  // namespace fc::harness
