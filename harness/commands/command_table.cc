#include "harness/commands/command_table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>

#include "harness/base/usage_error.h"
#include "harness/commands/attach_command.h"
#include "harness/commands/bench_command.h"
#include "harness/commands/diff_command.h"
#include "harness/commands/env_command.h"
#include "harness/commands/exec_command.h"
#include "harness/commands/list_command.h"
#include "harness/commands/matrix_command.h"
#include "harness/commands/report_command.h"
#include "harness/commands/run_command.h"
#include "harness/commands/watch_command.h"

namespace fc::harness {
namespace {

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

// The exit statuses: the table once, in forkcheck --help; each command points at it.
constexpr const char* kExitStatusFooter =
    "Exit status: 0 ok, 1 a finding, 2 usage error, 128+N interrupted (forkcheck --help)";

// exec, watch and matrix: how the program is shown while it runs (console/live_console.h).
void add_live_options(CLI::App& command, LiveOptions& live) {
  command.add_flag("--quiet", live.quiet,
                   "do not show the program's output as it comes (the reports still have it)");
  command
      .add_option("--hang-after", live.hang_after_s,
                  "end it as a hang once its whole tree has used no CPU for this long (default: "
                  "say so, take the stacks, and wait for the deadline)")
      ->check(kStallSeconds);
  command
      .add_option("--worker-failures", live.worker_failures,
                  "a worker that failed where the program did not deal with it (read its exit "
                  "code, ended it, got BrokenProcessPool): fail fails the run for it even where "
                  "whether it was dealt with cannot be seen; report only reports it (default: "
                  "fail where nothing dealt with it, report where that cannot be seen)")
      ->check(CLI::IsMember({"fail", "report"}));
}

// exec and watch: the program's default start method (harness/python/forkcheck_boot.py reads it).
void add_start_method_options(CLI::App& command, LiveOptions& live) {
  auto* method =
      command
          .add_option("--start-method", live.start_method,
                      "the default multiprocessing start method in every Python process of it "
                      "(and forkcheck::launch's); where the program names one itself, it keeps "
                      "it and the report says where")
          ->check(CLI::IsMember({"fork", "spawn", "forkserver"}));
  command
      .add_flag("--force-start-method", live.force_start_method,
                "the start method also where the program names its own (get_context, "
                "set_start_method)")
      ->needs(method);
}

// A command whose reports go to --out: the folder given, then the command.
template <typename Options>
std::function<int()> with_out(const std::string& out, Options& options,
                              int (*command)(const Options&)) {
  return [&out, &options, command] {
    options.out = out;
    return command(options);
  };
}

}  // namespace

// What the commands' options are parsed into.
struct CommandTable::State {
  std::string out;  // --out, any command's; empty: each run a folder of its own (session/out_dir.h)
  RunOptions run;   // all, run
  bool list_json = false;
  std::vector<std::string> list_ids;
  ExecOptions exec;
  AttachOptions attach;
  BenchOptions bench;
  ReportOptions report;
  DiffOptions diff;
  EnvOptions env;
  const CLI::App* env_app = nullptr;  // whether --python was given
  WatchOptions watch;
  MatrixOptions matrix;
};

CommandTable::CommandTable(std::vector<std::string> argv) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.exec.argv = s.attach.argv = s.bench.argv = s.watch.argv = s.matrix.argv = argv;
  s.run.argv = std::move(argv);
  // Twice the CPUs: a variant spends much of its time waiting (a hang waits for the watchdog, a
  // pool for its workers), and a variant that waits leaves its CPU to the others.
  s.run.jobs =
      static_cast<int>(std::min(64u, 2 * std::max(1u, std::thread::hardware_concurrency())));
  auto run_options = [&s](CLI::App& sub) {
    sub.add_option("--out", s.out, kOutHelp);
    sub.add_option("--timeout", s.run.timeout_s, "seconds each variant may run (default 60)")
        ->check(kTimeoutSeconds);
    sub.add_option("--only", s.run.only,
                   "run the variants matching this pattern (glob on case/variant)");
    sub.add_option("--jobs,-j", s.run.jobs,
                   "variants run at once (default: twice the number of CPUs)")
        ->check(CLI::Range(1, 64));
    sub.add_flag("!--no-zygote", s.run.zygote,
                 "exec every variant instead of forking it from a preloaded zygote (Linux)");
    sub.footer(kExitStatusFooter);
  };
  const auto run_cases_here = with_out(s.out, s.run, &run_cases);
  commands_ = {
      {"all", "run every case, every variant", run_options, run_cases_here},
      {"run", "run the named cases",
       [&s, run_options](CLI::App& sub) {
         sub.add_option("cases", s.run.case_ids, "case ids (forkcheck list)")->required();
         run_options(sub);
       },
       run_cases_here},
      {"list",
       "the cases, where each comes from, where it applies, and whose torch they run against",
       [&s](CLI::App& sub) {
         sub.add_flag("--json", s.list_json, "print them as JSON");
         sub.add_option("cases", s.list_ids,
                        "case ids: a page for each (source, mechanism, every variant and why)");
         sub.footer(kExitStatusFooter);
       },
       [&s] { return list_cases(s.list_json, s.list_ids); }},
      {"exec", "run any command under the watchdog: forkcheck exec -- CMD ARGS...",
       [&s](CLI::App& sub) {
         sub.add_option("--out", s.out, kOutHelp);
         sub.add_option("--timeout", s.exec.timeout_s,
                        "seconds the command may run (default: no deadline)")
             ->check(kTimeoutSeconds);
         add_live_options(sub, s.exec.live);
         add_start_method_options(sub, s.exec.live);
         sub.add_option("command", s.exec.command, "the command and its arguments, after --")
             ->required();
         sub.footer(
             "Exit status, as watch's (the table: forkcheck --help):\n"
             "  0      the program ended by itself with status 0\n"
             "  1      a finding: the program failed, crashed, hung or timed out (its own exit "
             "status is\n"
             "         in the last lines printed and in report.json's exit)\n"
             "  2      usage error: nothing run or written\n"
             "  128+N  forkcheck was interrupted by signal N (the report is partial)");
       },
       with_out(s.out, s.exec, &exec_command)},
      {"watch",
       "run a command and flag every hazardous fork it makes: forkcheck watch -- CMD ARGS...",
       [&s](CLI::App& sub) {
         sub.add_option("--out", s.out, kOutHelp);
         sub.add_option("--timeout", s.watch.timeout_s,
                        "seconds the command may run (default: no deadline)")
             ->check(kTimeoutSeconds);
         sub.add_option("--allow", s.watch.allow,
                        "accept one hazard kind knowingly (repeatable; kinds below)")
             ->type_name("KIND")
             ->allow_extra_args(false);  // one kind per --allow: what follows is the command
         add_live_options(sub, s.watch.live);
         add_start_method_options(sub, s.watch.live);
         sub.add_option("command", s.watch.command, "the command and its arguments, after --")
             ->required();
         sub.footer(watch_help_footer());
       },
       with_out(s.out, s.watch, &watch_command)},
      {"matrix",
       "run a Python program under fork, spawn and forkserver, side by side: forkcheck matrix -- "
       "python3 train.py",
       [&s](CLI::App& sub) {
         sub.add_option("--out", s.out, kOutHelp);
         sub.add_option("--timeout", s.matrix.timeout_s,
                        "seconds each method's run may take (default: 120)")
             ->check(kTimeoutSeconds);
         add_live_options(sub, s.matrix.live);
         sub.add_flag("--force-start-method", s.matrix.live.force_start_method,
                      "each method also where the program names its own (get_context, "
                      "set_start_method)");
         sub.add_option("command", s.matrix.command, "the command and its arguments, after --")
             ->required();
         sub.footer(
             "Exit status (the table: forkcheck --help):\n"
             "  0      the program was ok under every start method\n"
             "  1      a finding: it was not under one (the finding names which, and why where "
             "the run\n"
             "         shows it)\n"
             "  2      usage error: nothing run or written (a program whose start method cannot "
             "be set)\n"
             "  128+N  forkcheck was interrupted by signal N (the report is partial)");
       },
       with_out(s.out, s.matrix, &matrix_command)},
      {"attach", "watch a running process and its descendants, left running: forkcheck attach PID",
       [&s](CLI::App& sub) {
         sub.add_option("--out", s.out, kOutHelp);
         sub.add_option("pid", s.attach.pid, "the process to watch");
         sub.add_flag("--env", s.attach.print_env,
                      "print the lines a job script adds (eval \"$(forkcheck attach --env)\") so "
                      "that attach reads its Python processes' own frames; nothing else is done");
         sub.add_option("--hang-after", s.attach.hang_after_s,
                        "call it a hang once its whole tree has used no CPU for this long, or a "
                        "process of it has been stuck that long (default 10)")
             ->check(kStallSeconds);
         sub.add_option("--timeout", s.attach.timeout_s,
                        "seconds to watch (default: until it ends, hangs, or Ctrl-C)")
             ->check(kTimeoutSeconds);
         sub.add_flag("--kill-on-hang", s.attach.kill_on_hang,
                      "end its tree as exec would when it hangs (default: leave it running)");
         sub.footer(
             "Exit status (the table: forkcheck --help):\n"
             "  0      no hang seen: it worked on (left running) or ended (its exit status is "
             "its\n"
             "         parent's to read, not forkcheck's)\n"
             "  1      a finding: its tree hung (left running unless --kill-on-hang)\n"
             "  2      usage error: no such process, forkcheck's own, or not Linux; nothing "
             "written\n"
             "  128+N  forkcheck was interrupted by signal N (the program runs on; the report is "
             "partial)");
       },
       with_out(s.out, s.attach, &attach_command)},
      {"bench", "worker start latency and memory per start method, beside Python's",
       [&s](CLI::App& sub) {
         sub.add_option("--out", s.out, kOutHelp);
         sub.add_option("--repeat", s.bench.repeat, "workers started per method (default 10)")
             ->check(CLI::Range(1, 1000));
         sub.footer(kExitStatusFooter);
       },
       with_out(s.out, s.bench, &bench_command)},
      {"env", "the environment fingerprint, as a bug ticket needs it",
       [&s](CLI::App& sub) {
         s.env_app = &sub;
         sub.add_flag("--json", s.env.json, "print it as JSON");
         sub.add_option("--python", s.env.python,
                        "the Python interpreter to probe (default: python3 on PATH)")
             ->type_name("PATH");
         sub.add_option("--timeout", s.env.timeout_s, "seconds each probe may run (default 30)")
             ->check(kTimeoutSeconds);
         sub.footer(kExitStatusFooter);
       },
       [&s] {
         s.env.python_named = s.env_app->count("--python") > 0;
         return print_environment(s.env);
       }},
      {"report", "render the reports again from a saved run",
       [&s](CLI::App& sub) {
         sub.add_option("--from", s.report.from, "a run log (run.jsonl) or a report.json")
             ->required();
         sub.add_option("--out", s.report.out,
                        "directory for the reports (default: beside --from)");
         sub.footer(kExitStatusFooter);
       },
       [&s] { return report_command(s.report); }},
      {"diff",
       "what changed between two saved runs, and the environment differences that may explain "
       "it: forkcheck diff A B",
       [&s](CLI::App& sub) {
         sub.add_option("A", s.diff.a,
                        "the earlier run: its report.json or run.jsonl, its folder, or "
                        "forkcheck-report (its latest run)")
             ->required();
         sub.add_option("B", s.diff.b, "the run compared with A, given the same ways")->required();
         sub.add_flag("--json", s.diff.json, "print the comparison as JSON");
         sub.add_option("--markdown", s.diff.markdown,
                        "write it as Markdown to FILE, for a ticket (\"-\": print it instead)")
             ->type_name("FILE");
         sub.footer(
             "Exit status (the table: forkcheck --help):\n"
             "  0  B did not regress against A (identical, improved, or only different)\n"
             "  1  B regressed: a fix variant (or exec/watch's program) as expected in A and not "
             "in B,\n"
             "     a case whose verdict became regression or failed, or B's run not ok where A's "
             "was\n"
             "  2  usage error: a missing input, not a forkcheck report, a schema other than 1.x");
       },
       [&s] { return diff_command(s.diff); }},
  };
}

CommandTable::~CommandTable() = default;

void CommandTable::add_to(CLI::App& app) const {
  for (const auto& c : commands_) c.options(*app.add_subcommand(c.name, c.summary));
  // `forkcheck help [COMMAND]`: listed here, done by command_line.h (as --help).
  app.add_subcommand("help", "this help, or a command's: forkcheck help [COMMAND]");
}

std::string CommandTable::names() const {
  std::string s;
  for (const auto& c : commands_) s += (s.empty() ? "" : ", ") + c.name;
  return s + " or help";
}

int CommandTable::run(const CLI::App& app) const {
  for (const auto& c : commands_)
    if (app.got_subcommand(c.name)) return c.run();
  throw UsageError("a command is required: " + names() + " (see forkcheck help)");
}

}  // namespace fc::harness
