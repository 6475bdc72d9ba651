#include "harness/commands/watch_command.h"

#include "harness/session/out_dir.h"
#include "harness/session/program_lookup.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/session/run_session.h"
#include "harness/session/subject_command.h"
#include "harness/supervise/interrupt.h"
#include "harness/watch/fork_events.h"
#include "harness/watch/fork_hazards.h"
#include "harness/watch/preload.h"
#include "harness/watch/python_forks.h"
#include "harness/watch/watch_summary.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// report.json lists at most this many safe and this many hazardous forks (the totals count all).
constexpr size_t kListedPerKind = 500;

json listed_forks(const json& forks) {
  json out = json::array();
  size_t hazardous = 0, safe = 0;
  for (const auto& f : forks) {
    size_t& n = f["hazards"].empty() ? safe : hazardous;
    if (n++ < kListedPerKind) out.push_back(f);
  }
  return out;
}

fs::path events_dir(const fs::path& out) {
  return fs::absolute(out / "watch-events").lexically_normal();
}

void make_fresh(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);  // events of an earlier watch must not be read as this one's
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("watch: cannot create " + dir.string() + ": " + ec.message());
}

uint64_t monotonic_ns() {  // the shim's clock: CLOCK_MONOTONIC, as steady_clock is on Linux
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::string kinds_list() {
  std::string s;
  for (const auto& k : hazard_kinds()) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// How the program failed, for the judgement line ("" when it ended ok): its outcome and its own
// end, "error, its own exit status 3" or "hang, ended by forkcheck: killed by SIGTERM (...)".
std::string program_failure(const SubjectResult& done) {
  if (done.classified.outcome == Outcome::kOk)
    return done.descendants_failure.empty()
               ? ""
               : "the program exited 0, but " + done.descendants_failure;
  const ExitStatus& e = done.result.exit;
  const Outcome o = done.classified.outcome;
  return std::string(to_string(o)) + ", " +
         (o == Outcome::kHang || o == Outcome::kTimeout ? "ended by forkcheck: " : "") +
         (e.ended && e.signal == 0 ? "its own exit status " + std::to_string(e.code)
                                   : e.describe());
}

// An --allow that names no hazard kind is bad input: one line, before anything is written.
void check_allowed(const std::vector<std::string>& allow) {
  for (const auto& kind : allow)
    if (!is_hazard_kind(kind))
      throw UsageError("watch: --allow " + kind +
                       ": no such hazard kind (the kinds: " + kinds_list() + ")");
}

}  // namespace

int watch_command(const WatchOptions& options) {
  if (options.command.empty())
    throw UsageError("watch: no command given (forkcheck watch -- CMD ARGS...)");
  check_allowed(options.allow);
  const std::string program = resolve_command(options.command.front(), "watch");
  // Whether this can be watched at all is known before anything is written (the events folder
  // is named again once the run's folder is made).
  watch_environment(program, events_dir(options.out.empty() ? kReportsRoot : options.out).string());
  const fs::path out = make_out_dir(options.out, "watch");
  const fs::path events = events_dir(out);
  auto env = watch_environment(program, events.string());

  SubjectCommand subject;
  subject.name = "watch";
  subject.argv = options.argv;
  subject.command = options.command;
  subject.out = out;
  subject.timeout_s = options.timeout_s;
  subject.live = options.live;
  subject.prints_after = true;
  subject.env = env;
  subject.before_start = [&] { make_fresh(events); };

  json forks = json::array(), totals = fork_totals(forks), findings = json::array();
  const uint64_t start_ns = monotonic_ns();
  subject.annotate = [&](const ChildResult& r, json& details, std::string& message) {
    WatchEvents ev = read_watch_events(events);
    forks = pair_fork_events(ev.events, start_ns);
    add_python_sites(forks, r.python);  // Python's words for the fork's line and its threads
    add_hazards(forks);
    judge_forks(forks, options.allow);
    totals = fork_totals(forks);
    findings = hazard_findings(forks);
    details["forks"] = listed_forks(forks);
    details["watch"] = {{"totals", totals},
                        {"findings", findings},
                        {"allowed_kinds", options.allow},
                        {"forks_listed", details["forks"].size()},
                        {"events_dir", events.string()},
                        {"event_files", ev.files},
                        {"bad_event_lines", ev.bad_lines},
                        {"preload", env.front().first + "=" + env.front().second}};
    if (!message.empty()) message += "; ";
    message += watch_headline(totals);
  };

  SubjectResult done = run_subject(subject, program);
  std::string summary = watch_summary(forks, totals);  // escaped for the terminal
  int status = exit_status::kOk;
  if (done.interrupted) {
    status = interrupted_exit_status();
  } else {
    // exec's rule: the program's failure is a finding, and so is a hazardous fork not allowed.
    // The program's own status is said in the judgement and kept in the reports (exit.code).
    const std::string failure = program_failure(done);
    status = failure.empty() && totals.value("failing", 0) == 0 ? exit_status::kOk
                                                                : exit_status::kFinding;
    summary += watch_judgement(totals, findings, status, failure);
  }
  std::fwrite(summary.data(), 1, summary.size(), stdout);
  print_reports_line(out);
  return status;
}

std::string watch_help_footer() {
  return "Exit status, as exec's (the table: forkcheck --help):\n"
         "  0      the program ended by itself with status 0 and every fork was safe, or\n"
         "         hazardous only in kinds accepted with --allow\n"
         "  1      a finding: a hazardous fork of a kind not allowed, or the program failed,\n"
         "         crashed, hung or timed out, hazardous forks or not (its own exit status is\n"
         "         in the last lines printed and in report.json's exit)\n"
         "  2      usage error (no command, an unknown --allow kind): nothing run or written\n"
         "  128+N  forkcheck was interrupted by signal N (the report is partial)\n"
         "Hazard kinds (--allow KIND, repeatable: those forks are still listed, marked allowed):\n"
         "  thread-pool  an OpenMP/MKL/BLIS/TBB pool had live workers when it forked\n"
         "  threads      other threads were running when it forked\n"
         "  cuda         CUDA was initialised in the parent before it forked\n"
         "A fork whose child calls exec is never hazardous.";
}

}  // namespace fc::harness
