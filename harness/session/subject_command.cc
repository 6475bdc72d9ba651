#include "harness/session/subject_command.h"

#include "harness/catalog/case_signs.h"
#include "harness/catalog/known_messages.h"
#include "harness/console/live_console.h"
#include "harness/platform/host.h"
#include "harness/platform/install_layout.h"
#include "harness/python_facts/python_side.h"
#include "harness/session/run_session.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/watchdog_record.h"
#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"

#include <cstdio>

namespace fc::harness {

namespace {

// The OS refused to start it (execve): a harness error, whose message adds to the OS's error what
// forkcheck's own reading of the file says, in words a person knows ("its interpreter ... cannot
// be run" where execve says only "No such file or directory").
std::string start_failure(const std::string& start_error, const std::string& program) {
  std::string why;
  if (is_executable_file(program, why) || why.empty() || start_error.find(why) != std::string::npos)
    return start_error;
  return start_error + "; " + why;
}

// The catalog case whose failure shows the same wait as a process stuck for good (its
// `shows_as`, compiled into forkcheck: no program is started); "" when none does.
std::string case_showing_wait(const ProcessStall& stuck) {
  return case_showing(case_signs(),
                      "stuck:" + reports::stuck_kind(reports::read_as<reports::StuckProcess>(
                                     process_stall_record(stuck))));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> start_method_env(const std::string& method,
                                                                  bool force) {
  if (method.empty()) return {};
  std::vector<std::pair<std::string, std::string>> env = {{"FORKCHECK_START_METHOD", method}};
  if (force) env.emplace_back("FORKCHECK_FORCE_START_METHOD", "1");
  return env;
}

SubjectResult run_subject(const SubjectCommand& subject, const std::string& program) {
  install_interrupt_handlers();
  start_guardian();

  std::string shown;
  for (const auto& a : subject.command) shown += (shown.empty() ? "" : " ") + a;
  // One variant per start method under `matrix`; else the one named by the subcommand.
  const bool matrix = !subject.start_methods.empty();
  std::vector<std::string> methods =
      matrix ? subject.start_methods : std::vector<std::string>{subject.live.start_method};
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& method : methods)
    variants.push_back(
        {{"name", matrix ? method : subject.name},
         {"start_method", method.empty() ? "none" : method},
         {"role", "subject"},
         {"expected", "ok"},
         {"expected_why", subject.attach_pid > 0
                              ? "a program that works does not hang while watched"
                              : "a program that works ends by itself with status 0"},
         {"description", method.empty()
                             ? shown
                             : shown + " (default start method " + method +
                                   (subject.live.force_start_method ? ", forced" : "") + ")"},
         {"skip_reason", ""}});
  nlohmann::json the_case = {
      {"id", subject.name},
      {"title", "forkcheck " + subject.name + ": " + shown},
      {"source", {{"title", "the user's own command"}, {"author", ""}, {"document", ""}}},
      {"reported", ""},
      {"mechanism", ""},
      {"platforms", ""},
      {"program", program},
      {"command", subject.command},
      {"variants", variants}};
  RunSession session(subject.out,
                     {{"command", subject.name},
                      {"argv", subject.argv},
                      {"options",
                       {{"timeout_s", subject.timeout_s},
                        {"hang_after_s", subject.live.hang_after_s},
                        {"start_method", subject.live.start_method},
                        {"force_start_method", subject.live.force_start_method}}}},
                     /*zygotes=*/nullptr, /*for_catalog=*/false);
  session.add_case(the_case);
  if (subject.prints_after) session.defer_reports_line();
  session.set_total(variants.size());

  LiveConsole console(!subject.live.quiet, is_terminal(2));
  // The run really starts: an earlier run's files in the folder go now, not before.
  session.begin();
  if (subject.before_start) subject.before_start();
  SubjectResult out;
  bool environment_added = false;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const nlohmann::json& variant = variants[i];
    const std::string name = variant["name"].get<std::string>();
    if (i > 0 && interrupted()) break;  // no method starts after Ctrl-C (finish says not run)
    LaunchSpec spec;
    spec.argv = subject.command;
    spec.argv[0] = program;
    spec.env = subject.env;
    for (auto& e : start_method_env(methods[i], subject.live.force_start_method))
      spec.env.push_back(std::move(e));
    spec.timeout_s = subject.timeout_s;
    spec.channel = false;              // no steps for a plain program
    spec.stdin_passthrough = !matrix;  // a program that reads its input gets the caller's (once)
    spec.stacks_budget_s = kSubjectStacksBudgetS;
    spec.hang_after_s = subject.live.hang_after_s;
    spec.end_after_start_failures = 3;  // a Pool without a __main__ guard: no end otherwise
    if (subject.attach_pid > 0) {
      // Already running: nothing of it is started or given (no bootstrap, stdin, environment).
      spec.attach_pid = subject.attach_pid;
      spec.attach_start_time = subject.attach_start_time;
      spec.end_attached = subject.kill_on_hang;
      spec.stdin_passthrough = false;
      spec.end_after_start_failures = 0;
    } else {
      spec.python_bootstrap = find_python_bootstrap().found.string();
      spec.python_bytecode = python_bytecode_folder();
    }
    console.attach(spec);
    if (matrix) std::printf("forkcheck matrix: under %s\n", name.c_str());
    std::fflush(stdout);  // what forkcheck printed comes before the program's output
    out.result = supervise(spec);
    console.finish();
    ChildResult& r = out.result;
    // Interrupted once time was called (Ctrl-C while the stacks of a hang were taken): the tree's
    // state then is its outcome; the report is still marked interrupted.
    if (r.interrupted_by != 0 && !time_was_called(r)) {
      std::string unused;
      if (subject.annotate) subject.annotate(r, r.early_details, unused);
      // A process stuck for good when it was interrupted (its stall never ended): the case whose
      // failure shows that wait, as for a hang.
      if (r.stall && r.stall->process && r.stall->resumed_after_s < 0)
        if (const std::string id = case_showing_wait(*r.stall->process); !id.empty())
          r.early_details["stuck_shown_by"] = id;
      session.add_interrupted(subject.name, variant, r);
      session.finish(/*interrupted=*/true);
      out.interrupted = true;
      return out;
    }
    // The Python side of the Environment is the program's own, as it ran (the bootstrap's facts).
    if (!environment_added)
      if (auto python = program_python_environment(r.python, r.pid, program); !python.is_null()) {
        session.add_environment({{"python", python}});
        environment_added = true;
      }
    out.classified = classify(r, /*expect_result=*/false);
    if (!r.started) out.classified.message = start_failure(r.start_error, program);
    if (!subject.live.worker_failures.empty())
      out.classified.details["worker_failures"] = subject.live.worker_failures;
    // A failure the catalog knows by its message: named with its case and fix, from the signs
    // compiled into forkcheck (no repro program is started).
    const bool failed =
        out.classified.outcome != Outcome::kOk ||
        !reports::failed_descendants(
             reports::read_variant(
                 {{"python", r.python}, {"pid", r.pid}, {"details", out.classified.details}}))
             .empty();
    if (failed) out.all_ok = false;
    if (failed && !interrupted()) {
      const std::string said = failure_text(r.err.text(), r.python, r.exit.describe());
      const nlohmann::json& cases = case_signs();
      const nlohmann::json explained = explain_messages(cases, said);
      if (!explained.empty()) out.classified.details["explained_by"] = explained;
      // A process stuck for good: the case whose failure shows the same wait.
      if (r.stuck)
        if (const std::string id = case_showing_wait(*r.stuck); !id.empty())
          out.classified.details["stuck_shown_by"] = id;
    }
    if (subject.annotate) subject.annotate(r, out.classified.details, out.classified.message);
    session.add_result(subject.name, variant, r, out.classified);
  }
  const nlohmann::json report = session.finish(/*interrupted=*/interrupted() != 0);
  for (const auto& c : report["cases"])
    for (const auto& v : c["variants"])
      if (const auto d = reports::descendants_failure(reports::read_variant(v)); !d.empty())
        out.descendants_failure = d;
  // Ctrl-C while the interpreter was probed: the run is whole, but forkcheck says it was stopped.
  out.interrupted = interrupted() != 0;
  return out;
}

}  // namespace fc::harness
