// forkcheck: reproduces the fork-safety failures of multiprocessing PyTorch programs, one process
// per case under a watchdog, and shows the fixed behaviour under spawn and forkserver.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/commands/attach_command.h"
#include "harness/commands/bench_command.h"
#include "harness/commands/command_line.h"
#include "harness/commands/diff_command.h"
#include "harness/commands/env_command.h"
#include "harness/commands/exec_command.h"
#include "harness/commands/list_command.h"
#include "harness/commands/matrix_command.h"
#include "harness/commands/report_command.h"
#include "harness/commands/run_command.h"
#include "harness/commands/watch_command.h"
#include "harness/common/exit_status_codes.h"
#include "harness/common/usage_error.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/supervisor.h"
#include "harness/version.h"
#include "reports/text.h"

namespace {

// Messages may quote the command line or a child's output: escaped for the terminal.
int usage_error(const std::string& what) {
  std::cerr << "forkcheck: error: " << fc::reports::terminal_safe(what) << "\n";
  return fc::harness::exit_status::kUsage;
}

// A finite number of seconds in [lo, 86400]. CLI11's Range lets "nan" through (every comparison
// with NaN is false), and a NaN deadline would never pass.
CLI::Validator seconds_from(double lo, const std::string& lo_text) {
  return CLI::Validator(
      [lo, lo_text](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        const double s = std::strtod(begin, &end);
        if (text.empty() || end != begin + text.size() || !std::isfinite(s) || s < lo ||
            s > 86400.0)
          return text + " is not a number of seconds from " + lo_text + " to 86400 (a day)";
        return {};
      },
      "SECONDS in [" + lo_text.substr(0, lo_text.find(' ')) + ", 86400]");
}

// --timeout: from half a second to a day.
const CLI::Validator kTimeoutSeconds = seconds_from(0.5, "0.5");
// --hang-after: a stall is only known after a whole stall window (launch/tree_activity.h).
const CLI::Validator kStallSeconds = seconds_from(1.0, "1 (a stall window)");

constexpr const char* kOutHelp =
    "folder for the reports, replacing those an earlier run left there (default: a new folder "
    "forkcheck-report/COMMAND-DATE-TIME, with forkcheck-report/latest pointing at it)";

// exec and watch: how the program is shown while it runs (harness/common/live_console.h).
void add_live_options(CLI::App* command, fc::harness::LiveOptions& live) {
  command->add_flag("--quiet", live.quiet,
                    "do not show the program's output as it comes (the reports still have it)");
  command
      ->add_option("--hang-after", live.hang_after_s,
                   "end it as a hang once its whole tree has used no CPU for this long (default: "
                   "say so, take the stacks, and wait for the deadline)")
      ->check(kStallSeconds);
  command
      ->add_option("--worker-failures", live.worker_failures,
                   "a worker that failed where the program did not deal with it (read its exit "
                   "code, ended it, got BrokenProcessPool): fail fails the run for it even where "
                   "whether it was dealt with cannot be seen; report only reports it (default: "
                   "fail where nothing dealt with it, report where that cannot be seen)")
      ->check(CLI::IsMember({"fail", "report"}));
}

// exec and watch: the program's default start method (harness/python/forkcheck_boot.py reads it).
void add_start_method_options(CLI::App* command, fc::harness::LiveOptions& live) {
  auto* method =
      command
          ->add_option("--start-method", live.start_method,
                       "the default multiprocessing start method in every Python process of it "
                       "(and forkcheck::launch's); where the program names one itself, it keeps "
                       "it and the report says where")
          ->check(CLI::IsMember({"fork", "spawn", "forkserver"}));
  command
      ->add_flag("--force-start-method", live.force_start_method,
                 "the start method also where the program names its own (get_context, "
                 "set_start_method)")
      ->needs(method);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything changes them: what every child of ours gets back (supervise/supervisor.h).
  fc::harness::record_inherited_signals();
  // A closed stdout (`forkcheck all | head -1`) fails a write; it never ends the run.
  fc::harness::ignore_sigpipe();
  // Started with a standard descriptor closed, the next pipe or socket would take its number and
  // a stray write to it would corrupt the supervisor's plumbing: /dev/null takes the place.
  fc::harness::open_closed_stdio();
  // A tree of thousands of processes is held by a pidfd each: room for them (the children get
  // the limit forkcheck was started with back).
  fc::harness::raise_descriptor_limit();
  // forkcheck starts no child but through the supervisor: every child of its process is a tree's.
  fc::harness::claim_every_child();
  // The guardian, once started, is waited for whichever way main() returns: nothing forkcheck
  // started outlives it.
  struct StopHelpers {
    ~StopHelpers() { fc::harness::stop_guardian(); }
  } stop_helpers;
  using fc::harness::RunOptions;
  CLI::App app{"forkcheck: fork-safety failures of multiprocessing PyTorch programs, reproduced"};
  app.set_version_flag("--version", fc::harness::kVersion);
  app.require_subcommand(0, 1);  // checked after parsing, so a bad flag is named first

  RunOptions opt;
  opt.argv.assign(argv, argv + argc);
  // Twice the CPUs: a variant spends much of its time waiting (a hang waits for the watchdog, a
  // pool for its workers), and a variant that waits leaves its CPU to the others.
  opt.jobs = static_cast<int>(std::min(64u, 2 * std::max(1u, std::thread::hardware_concurrency())));
  std::string out;  // empty: each run a folder of its own (harness/common/out_dir.h)
  auto add_run_options = [&](CLI::App* sub) {
    sub->add_option("--out", out, kOutHelp);
    sub->add_option("--timeout", opt.timeout_s, "seconds each variant may run (default 60)")
        ->check(kTimeoutSeconds);
    sub->add_option("--only", opt.only,
                    "run the variants matching this pattern (glob on case/variant)");
    sub->add_option("--jobs,-j", opt.jobs,
                    "variants run at once (default: twice the number of CPUs)")
        ->check(CLI::Range(1, 64));
    sub->add_flag("!--no-zygote", opt.zygote,
                  "exec every variant instead of forking it from a preloaded zygote (Linux)");
  };
  auto* all = app.add_subcommand("all", "run every case, every variant");
  add_run_options(all);
  auto* run = app.add_subcommand("run", "run the named cases");
  run->add_option("cases", opt.case_ids, "case ids (forkcheck list)")->required();
  add_run_options(run);
  auto* list = app.add_subcommand(
      "list",
      "the cases, where each comes from, where it applies, and whose torch they run against");
  bool list_json = false;
  std::vector<std::string> list_ids;
  list->add_flag("--json", list_json, "print them as JSON");
  list->add_option("cases", list_ids,
                   "case ids: a page for each (source, mechanism, every variant and why)");

  fc::harness::ExecOptions exec_opt;
  exec_opt.argv = opt.argv;
  auto* exec = app.add_subcommand(
      "exec", "run any command under the watchdog: forkcheck exec -- CMD ARGS...");
  exec->add_option("--out", out, kOutHelp);
  exec->add_option("--timeout", exec_opt.timeout_s,
                   "seconds the command may run (default: no deadline)")
      ->check(kTimeoutSeconds);
  add_live_options(exec, exec_opt.live);
  add_start_method_options(exec, exec_opt.live);
  exec->add_option("command", exec_opt.command, "the command and its arguments, after --")
      ->required();

  // `forkcheck attach PID`: a running process and its tree, watched as exec watches its child
  // (harness/commands/attach_command.h).
  fc::harness::AttachOptions attach_opt;
  attach_opt.argv = opt.argv;
  auto* attach = app.add_subcommand(
      "attach", "watch a running process and its descendants, left running: forkcheck attach PID");
  attach->add_option("--out", out, kOutHelp);
  attach->add_option("pid", attach_opt.pid, "the process to watch");
  attach->add_flag("--env", attach_opt.print_env,
                   "print the lines a job script adds (eval \"$(forkcheck attach --env)\") so "
                   "that attach reads its Python processes' own frames; nothing else is done");
  attach
      ->add_option("--hang-after", attach_opt.hang_after_s,
                   "call it a hang once its whole tree has used no CPU for this long, or a "
                   "process of it has been stuck that long (default 10)")
      ->check(kStallSeconds);
  attach
      ->add_option("--timeout", attach_opt.timeout_s,
                   "seconds to watch (default: until it ends, hangs, or Ctrl-C)")
      ->check(kTimeoutSeconds);
  attach->add_flag("--kill-on-hang", attach_opt.kill_on_hang,
                   "end its tree as exec would when it hangs (default: leave it running)");

  // `forkcheck bench`: start-up cost per start method, beside Python's
  // (harness/commands/bench_command.cc).
  fc::harness::BenchOptions bench_opt;
  bench_opt.argv = opt.argv;
  auto* bench = app.add_subcommand(
      "bench", "worker start latency and memory per start method, beside Python's");
  bench->add_option("--out", out, kOutHelp);
  bench->add_option("--repeat", bench_opt.repeat, "workers started per method (default 10)")
      ->check(CLI::Range(1, 1000));

  // Reports and the environment fingerprint (harness/commands/report_command.cc,
  // common/environment_probe.cc).
  fc::harness::ReportOptions report_opt;
  auto* report = app.add_subcommand("report", "render the reports again from a saved run");
  report->add_option("--from", report_opt.from, "a run log (run.jsonl) or a report.json")
      ->required();
  report->add_option("--out", report_opt.out, "directory for the reports (default: beside --from)");
  // `forkcheck diff A B`: what changed between two saved runs, and what may explain it.
  fc::harness::DiffOptions diff_opt;
  auto* diff = app.add_subcommand(
      "diff",
      "what changed between two saved runs, and the environment differences that may "
      "explain it: forkcheck diff A B");
  diff->add_option("A", diff_opt.a,
                   "the earlier run: its report.json or run.jsonl, its folder, or "
                   "forkcheck-report (its latest run)")
      ->required();
  diff->add_option("B", diff_opt.b, "the run compared with A, given the same ways")->required();
  diff->add_flag("--json", diff_opt.json, "print the comparison as JSON");
  diff->add_option("--markdown", diff_opt.markdown,
                   "write it as Markdown to FILE, for a ticket (\"-\": print it instead)")
      ->type_name("FILE");
  fc::harness::EnvOptions env_opt;
  auto* env = app.add_subcommand("env", "the environment fingerprint, as a bug ticket needs it");
  env->add_flag("--json", env_opt.json, "print it as JSON");
  env->add_option("--python", env_opt.python,
                  "the Python interpreter to probe (default: python3 on PATH)")
      ->type_name("PATH");
  env->add_option("--timeout", env_opt.timeout_s, "seconds each probe may run (default 30)")
      ->check(kTimeoutSeconds);

  // `forkcheck watch -- CMD`: flag every hazardous fork the command makes (harness/watch/).
  fc::harness::WatchOptions watch_opt;
  watch_opt.argv = opt.argv;
  auto* watch = app.add_subcommand(
      "watch",
      "run a command and flag every hazardous fork it makes: forkcheck watch -- CMD ARGS...");
  watch->add_option("--out", out, kOutHelp);
  watch
      ->add_option("--timeout", watch_opt.timeout_s,
                   "seconds the command may run (default: no deadline)")
      ->check(kTimeoutSeconds);
  watch
      ->add_option("--allow", watch_opt.allow,
                   "accept one hazard kind knowingly (repeatable; kinds below)")
      ->type_name("KIND")
      ->allow_extra_args(false);  // one kind per --allow: what follows is the command
  add_live_options(watch, watch_opt.live);
  add_start_method_options(watch, watch_opt.live);

  // `forkcheck matrix`: the program under each start method (harness/commands/matrix_command.h).
  fc::harness::MatrixOptions matrix_opt;
  matrix_opt.argv = opt.argv;
  auto* matrix = app.add_subcommand(
      "matrix",
      "run a Python program under fork, spawn and forkserver, side by side: forkcheck "
      "matrix -- python3 train.py");
  matrix->add_option("--out", out, kOutHelp);
  matrix
      ->add_option("--timeout", matrix_opt.timeout_s,
                   "seconds each method's run may take (default: 120)")
      ->check(kTimeoutSeconds);
  add_live_options(matrix, matrix_opt.live);
  matrix->add_flag("--force-start-method", matrix_opt.live.force_start_method,
                   "each method also where the program names its own (get_context, "
                   "set_start_method)");
  matrix->add_option("command", matrix_opt.command, "the command and its arguments, after --")
      ->required();
  watch->add_option("command", watch_opt.command, "the command and its arguments, after --")
      ->required();
  watch->footer(fc::harness::watch_help_footer());
  // `forkcheck help [COMMAND]`: listed here, done by command_line.h (as --help).
  app.add_subcommand("help", "this help, or a command's: forkcheck help [COMMAND]");

  // The exit statuses: the table once, in forkcheck --help; each command points at it (a
  // subcommand takes its parent's footer when it is made, so this comes after them all).
  for (auto* sub : {all, run, list, bench, report, env})
    sub->footer(
        "Exit status: 0 ok, 1 a finding, 2 usage error, 128+N interrupted (forkcheck --help)");
  diff->footer(
      "Exit status (the table: forkcheck --help):\n"
      "  0  B did not regress against A (identical, improved, or only different)\n"
      "  1  B regressed: a fix variant (or exec/watch's program) as expected in A and not in B,\n"
      "     a case whose verdict became regression or failed, or B's run not ok where A's was\n"
      "  2  usage error: a missing input, not a forkcheck report, a schema other than 1.x");
  exec->footer(
      "Exit status, as watch's (the table: forkcheck --help):\n"
      "  0      the program ended by itself with status 0\n"
      "  1      a finding: the program failed, crashed, hung or timed out (its own exit status is\n"
      "         in the last lines printed and in report.json's exit)\n"
      "  2      usage error: nothing run or written\n"
      "  128+N  forkcheck was interrupted by signal N (the report is partial)");
  attach->footer(
      "Exit status (the table: forkcheck --help):\n"
      "  0      no hang seen: it worked on (left running) or ended (its exit status is its\n"
      "         parent's to read, not forkcheck's)\n"
      "  1      a finding: its tree hung (left running unless --kill-on-hang)\n"
      "  2      usage error: no such process, forkcheck's own, or not Linux; nothing written\n"
      "  128+N  forkcheck was interrupted by signal N (the program runs on; the report is "
      "partial)");
  matrix->footer(
      "Exit status (the table: forkcheck --help):\n"
      "  0      the program was ok under every start method\n"
      "  1      a finding: it was not under one (the finding names which, and why where the run\n"
      "         shows it)\n"
      "  2      usage error: nothing run or written (a program whose start method cannot be set)\n"
      "  128+N  forkcheck was interrupted by signal N (the report is partial)");
  app.footer(fc::harness::exit_status::kHelpTable);

  // `help [COMMAND]` becomes --help, a misspelt command is named with the closest ones; after a
  // refusal, a misspelt option likewise.
  std::vector<std::string> args(argv, argv + argc);
  if (const std::string bad = fc::harness::rewrite_help_and_check_command(app, args); !bad.empty())
    return usage_error(bad);
  std::vector<const char*> arg_pointers;
  for (const auto& a : args) arg_pointers.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string unknown = fc::harness::explain_unknown_option(app, args);
    return usage_error(unknown.empty() ? e.what() : unknown);
  }

  if (app.get_subcommands().empty())
    return usage_error(
        "a command is required: all, run, list, exec, watch, matrix, attach, bench, env, report, "
        "diff or "
        "help "
        "(see forkcheck help)");
  try {
    opt.out = out;
    if (*list) return fc::harness::list_cases(list_json, list_ids);
    if (*bench) {
      bench_opt.out = out;
      return fc::harness::bench_command(bench_opt);
    }
    if (*report) return fc::harness::report_command(report_opt);
    if (*diff) return fc::harness::diff_command(diff_opt);
    if (*env) {
      env_opt.python_named = env->count("--python") > 0;
      return fc::harness::print_environment(env_opt);
    }
    if (*watch) {
      watch_opt.out = out;
      return fc::harness::watch_command(watch_opt);
    }
    if (*attach) {
      attach_opt.out = out;
      return fc::harness::attach_command(attach_opt);
    }
    if (*exec) {
      exec_opt.out = out;
      return fc::harness::exec_command(exec_opt);
    }
    if (*matrix) {
      matrix_opt.out = out;
      return fc::harness::matrix_command(matrix_opt);
    }
    return fc::harness::run_cases(opt);
  } catch (const fc::harness::UsageError& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "forkcheck: " << fc::reports::terminal_safe(e.what()) << "\n";
    return fc::harness::exit_status::kError;
  }
}
