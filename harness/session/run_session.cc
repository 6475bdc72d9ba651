#include "harness/session/run_session.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "harness/base/iso_time.h"
#include "harness/catalog/case_signs.h"
#include "harness/catalog/known_messages.h"
#include "harness/console/console_style.h"
#include "harness/platform/host.h"
#include "harness/session/environment_probe.h"
#include "harness/supervise/watchdog_record.h"
#include "harness/supervise/zygote.h"
#include "harness/version.h"
#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/subject_text.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"
#include "reports/watch_view.h"
#include "reports/watchdog_text.h"

namespace fc::harness {
namespace {

double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Text a child wrote (a variant's message carries the tail of its stderr), for the terminal.
std::string shown(const nlohmann::json& v) { return reports::terminal_safe(reports::display(v)); }

nlohmann::json base_record(const std::string& case_id, const nlohmann::json& planned) {
  nlohmann::json v = planned;
  v["type"] = "variant";
  v["case"] = case_id;
  return v;
}

// A stall seen while the tree was left running (exec, watch): when, what it waited in, and the
// stacks taken then.
void add_stall(nlohmann::json& v, const ChildResult& r) {
  if (!r.stall) return;
  const StallNote& n = *r.stall;
  nlohmann::json s = {{"after_s", n.after_s},
                      {"still_s", n.still_s},
                      {"waiting_in", n.waiting_in},
                      {"processes", n.processes},
                      {"threads", n.threads},
                      {"kind", n.kind == StallNote::Kind::kProcess ? "process" : "tree"}};
  if (n.process) s["process"] = process_stall_record(*n.process);
  if (n.resumed_after_s >= 0) s["resumed_after_s"] = n.resumed_after_s;
  if (!r.stall_stacks.method.empty()) {
    s["stacks"] = to_json(r.stall_stacks);
    s["stacks_method"] = r.stall_stacks.method;
    if (!r.stall_stacks.note.empty()) s["stacks_note"] = r.stall_stacks.note;
    if (!r.stall_stacks.python_note.empty()) s["stacks_python_note"] = r.stall_stacks.python_note;
  }
  v["stall"] = std::move(s);
}

void add_stacks(nlohmann::json& v, const Stacks& stacks) {
  v["stacks"] = to_json(stacks);
  if (!stacks.method.empty()) v["stacks_method"] = stacks.method;
  if (!stacks.note.empty()) v["stacks_note"] = stacks.note;
  if (!stacks.python_note.empty()) v["stacks_python_note"] = stacks.python_note;
}

// The closing lines: the key finding, the one fix, where the reports are (the last line).
void print_finding(const reports::Report& report) {
  const reports::Finding f = reports::key_finding(report);
  std::string text = "\n" + std::string(f.bad ? "FINDING: " : "finding: ") + f.headline + "\n";
  for (const auto& fact : f.facts) text += "  " + fact + "\n";
  if (!f.fix.empty()) text += "FIX: " + f.fix + "\n";
  text = reports::terminal_safe(text);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void print_reports_line(const std::filesystem::path& out) {
  const std::string text = "reports: " + reports::terminal_safe((out / "issue.md").string()) +
                           " (to paste into a ticket), report.html, report.json\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

RunSession::RunSession(const std::filesystem::path& out, nlohmann::json header, Zygotes* zygotes,
                       bool for_catalog)
    : out_(out), started_(monotonic_s()) {
  header["type"] = "run";
  header["schema_version"] = reports::kSchemaVersion;
  header["tool"] = {{"name", "forkcheck"}, {"version", kVersion}};
  header["started_at"] = now_iso8601();
  header["platform"] = host_platform();
  // From a repro program, or for a user's program from forkcheck itself: environment_probe.h.
  header["environment"] =
      for_catalog ? collect_environment(60, zygotes) : user_program_environment();
  // What a ticket asks of the machine (/dev/shm, open files, CPUs, variables), measured here at
  // no cost, and the risks it shows.
  header["environment"]["machine"] = measure_machine();
  header["environment"]["risks"] =
      reports::environment_risks(reports::read_as<reports::Environment>(header["environment"]));
  name_risk_cases(header["environment"]["risks"],
                  case_signs());  // each risk a case shows: its page
  environment_ = header["environment"];
  append(header);
}

// The files an earlier run left go first: a run cut short must not leave an older run's reports
// beside its own log. Not before: a run that never started (forkcheck failed or was stopped
// before its first variant) leaves the folder's earlier reports as they were.
void RunSession::begin() {
  if (log_) return;
  reports::remove_run_files(out_);
  log_ = std::make_unique<reports::RunLog>(out_ / reports::kRunLogFileName);
  for (const auto& line : held_) log_->append(line);
  held_.clear();
}

void RunSession::append(const nlohmann::json& line) {
  if (log_)
    log_->append(line);
  else
    held_.push_back(line);
}

void RunSession::add_environment(const nlohmann::json& more) {
  for (const auto& [k, v] : more.items()) {
    environment_[k] = v;
    environment_more_[k] = v;
  }
  nlohmann::json risks =
      reports::environment_risks(reports::read_as<reports::Environment>(environment_));
  name_risk_cases(risks, case_signs());
  environment_["risks"] = environment_more_["risks"] = risks;
}

void RunSession::add_case(const nlohmann::json& planned_case) {
  nlohmann::json line = planned_case;
  line["type"] = "case";
  append(line);
}

void RunSession::add_result(const std::string& case_id, const nlohmann::json& planned,
                            const ChildResult& r, const Classified& c) {
  nlohmann::json v = base_record(case_id, planned);
  v["outcome"] = to_string(c.outcome);
  v["message"] = c.message;
  v["duration_s"] = r.duration_s;
  if (r.pid > 0) v["pid"] = r.pid;
  if (!r.started_via.empty()) v["started_via"] = r.started_via;
  if (!r.start_note.empty()) v["start_note"] = r.start_note;
  v["exit"] = r.exit.to_json();
  v["stdout"] = r.out.text();
  v["stderr"] = r.err.text();
  v["output_bytes"] = {{"stdout", r.out.total_bytes()},
                       {"stderr", r.err.total_bytes()},
                       {"truncated", r.out.truncated() || r.err.truncated()}};
  v["details"] = c.details;
  v["steps"] = r.steps;
  v["watchdog"] = c.watchdog;  // as classify() built it and worded the message from it
  if (r.bad_channel_lines > 0)
    v["protocol_error"] = {
        {"line", r.bad_channel_line}, {"why", r.bad_channel_why}, {"lines", r.bad_channel_lines}};
  if (r.step_hang) v["hang"] = step_hang_record(r);
  add_stacks(v, r.stacks);
  // Who waited on whom when time was called (or why that was not read).
  if (r.waits.read || !r.waits.why_not.empty()) v["wait_chain"] = to_json(r.wait_chain, r.waits);
  add_stall(v, r);
  if (!r.python.is_null()) v["python"] = r.python;
  if (!r.memory.is_null()) v["memory"] = r.memory;
  if (!r.python_note.empty()) v["python_note"] = r.python_note;
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
  const std::string by = "forkcheck was interrupted by " + signal_name(r.interrupted_by);
  const std::string message =
      r.started
          ? "not finished: " + by + " after " + reports::format_tenths(r.duration_s) +
                (r.attached && r.attached->left_running ? " and left it running (forkcheck attach)"
                                                        : " and killed it")
          : "not run: " + by + " before it started";
  // Neither as expected nor not (reports/report_view.h: unfinished): a skip, never a regression.
  v["outcome"] = "skip";
  v["message"] = message;
  v["interrupted"] = true;
  if (!r.started) v["not_run"] = true;
  v["duration_s"] = r.duration_s;
  if (r.pid > 0) v["pid"] = r.pid;
  if (!r.started_via.empty()) v["started_via"] = r.started_via;
  if (!r.start_note.empty()) v["start_note"] = r.start_note;
  v["exit"] = r.exit.to_json();
  v["stdout"] = r.out.text();
  v["stderr"] = r.err.text();
  v["details"] = r.early_details;
  // What is known of a stuck tree when forkcheck was interrupted: the stacks of its stall, if it
  // never worked again after it (else they are the past's, kept under "stall" only).
  if (r.stall && r.stall->resumed_after_s < 0 && !r.stall_stacks.method.empty()) {
    Stacks stacks = r.stall_stacks;
    stacks.note += (stacks.note.empty() ? "" : "; ") +
                   std::string("taken when the whole tree stalled at ") +
                   reports::format_tenths(r.stall->after_s) + ", still since";
    add_stacks(v, stacks);
  } else {
    v["stacks"] = nlohmann::json::array();
  }
  add_stall(v, r);
  // What the program's Python side told until then (its forks, their threads): what the finding
  // words a stall that never ended with, as it would a hang.
  if (!r.python.is_null()) v["python"] = r.python;
  if (!r.python_note.empty()) v["python_note"] = r.python_note;
  append_variant(v);
}

void RunSession::append_variant(const nlohmann::json& v) {
  append(v);
  ++done_;
  const reports::Variant model = reports::read_variant(v);
  const bool matched = reports::matched(model);
  const bool unfinished = reports::unfinished(model);
  // `forkcheck watch`: hazardous forks fail a program that ended as expected.
  const std::string hazards = reports::watch_failure(model);
  if (model.role == "subject") {
    // A user's program: said of the program, not in the catalog's words.
    const reports::SubjectLine line =
        reports::subject_line(model, done_, std::max(total_, done_), hazards);
    std::printf("%s  %s\n", reports::terminal_safe(line.text).c_str(),
                paint_verdict(line.verdict).c_str());
  } else {
    std::printf("[%2zu/%zu] %-22s %-20s %-6s (expected %-5s) %6.1fs  %s\n", done_,
                std::max(total_, done_), shown(v["case"]).c_str(), shown(v["name"]).c_str(),
                v["outcome"].get<std::string>().c_str(), v["expected"].get<std::string>().c_str(),
                v["duration_s"].get<double>(),
                paint_verdict(!hazards.empty()               ? "FAILED: HAZARDOUS FORKS"
                              : unfinished                   ? reports::outcome_shown(model)
                              : matched                      ? "as expected"
                              : v.value("role", "") == "fix" ? "REGRESSION"
                                                             : "differs")
                    .c_str());
  }
  // A variant never started says no more than its line: why is said once, at the end.
  if (v.value("not_run", false)) {
    std::fflush(stdout);
    return;
  }
  if (!matched || v["outcome"] != "ok" || !hazards.empty()) {
    std::string m = v.value("message", "");
    if (!hazards.empty())
      m = hazards + (m.empty() ? "" : "; " + m);  // first: a long message is cut
    m = reports::shorten(m, 303);
    // Written by length: a NUL the child printed must not end the line there.
    std::string line = "        " + reports::terminal_safe(m) + "\n";
    // Where time was called, what the tree was doing then (the message says why).
    if (const std::string tree = reports::tree_facts(model.watchdog, model.outcome);
        !tree.empty() && (model.outcome == "hang" || model.outcome == "timeout"))
      line += "        process tree: " + reports::terminal_safe(tree) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  std::fflush(stdout);
}

nlohmann::json RunSession::finish(bool interrupted) {
  nlohmann::json end = {{"type", "end"},
                        {"finished_at", now_iso8601()},
                        {"duration_s", monotonic_s() - started_},
                        {"interrupted", interrupted}};
  // The fold merges an end record's "environment" into the run's (reports/run_log.cc).
  if (!environment_more_.is_null()) end["environment"] = environment_more_;
  begin();
  log_->append(end);
  // From the run's own records: not from the file, which is the run's alone only by the folder's
  // lock (out_dir.h), and which anyone may append to.
  nlohmann::json report = reports::fold_run_log(log_->lines());
  const reports::Report model = reports::read_report(report);
  auto written = reports::write_reports(model, out_);

  const auto& s = report["summary"];
  // The catalog's tally and each case's verdict; a user's program has its lines above and its
  // finding below.
  if (reports::is_subject_report(model)) {
    if (interrupted) std::printf("\nINTERRUPTED: a partial report\n");
  } else {
    std::printf("\n%d cases, %d variants:", s["cases"].get<int>(), s["variants"].get<int>());
    for (const auto& [verdict, n] : s["by_verdict"].items())
      std::printf(" %s %d,", verdict.c_str(), n.get<int>());
    std::printf(" harness failures %d%s\n", s["harness_failures"].get<int>(),
                interrupted ? " (INTERRUPTED: a partial report)" : "");
    for (const auto& c : report["cases"]) {
      // The reason may quote a variant's message, and so a child's output: escaped (no NUL is
      // left for %s to stop at) and written by length.
      std::printf("  %-22s %s ", shown(c["id"]).c_str(),
                  paint_verdict(shown(c["verdict"]), 15).c_str());
      const std::string reason = shown(c["verdict_reason"]) + "\n";
      std::fwrite(reason.data(), 1, reason.size(), stdout);
    }
  }
  for (const auto& p : written) std::printf("wrote %s\n", p.string().c_str());
  print_finding(model);
  if (reports_line_last_) print_reports_line(out_);
  std::fflush(stdout);
  return report;
}

}  // namespace fc::harness
