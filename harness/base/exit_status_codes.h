// forkcheck's exit statuses: one table, the same for every command, shown once at the end of
// `forkcheck --help`. Every command returns these names, never a bare number.
//
//   0      ok: everything as expected
//   1      a finding (or forkcheck itself could not finish: it says why on stderr)
//   2      usage error: one line on stderr, nothing run or written
//   128+N  forkcheck was interrupted by signal N (130 for Ctrl-C): the reports are partial
//
// `exec` and `watch` judge the user's program by the same rule: the program's own exit status is
// never forkcheck's; it is in the terminal summary and in every report (report.json's exit.code).
#pragma once

namespace fc::harness::exit_status {

// all, run: every fix variant behaved. exec, watch: the program ended by itself with status 0
// (and, under watch, made no hazardous fork of a kind not allowed). list, env, bench, report: done.
// diff: B did not regress against A (identical, better, or only different).
inline constexpr int kOk = 0;

// all, run: a regression or a failed case. exec, watch: the program failed, crashed, hung or timed
// out; watch: a hazardous fork of a kind not allowed. diff: B regressed against A
// (reports/report_diff.h says exactly when).
inline constexpr int kFinding = 1;

// forkcheck itself could not do its job (a repro program that could not list its cases or report
// its environment, a benchmark that failed, a file that could not be written), said on stderr. The
// same number as a finding: either way, something needs a look.
inline constexpr int kError = 1;

// Bad input: one line on stderr naming the problem (and the closest name, for a misspelt command
// or option), before anything is run or written.
inline constexpr int kUsage = 2;

// forkcheck was interrupted by signal N: 128 + N, as a shell reports it (130 for SIGINT).
inline constexpr int kInterruptedBase = 128;
inline constexpr int interrupted_by(int signal) { return kInterruptedBase + signal; }

// The table as `forkcheck --help` shows it (its footer).
inline constexpr const char kHelpTable[] =
    "Exit status (every command):\n"
    "  0      ok: everything as expected (exec, watch: the program ended by itself with status 0\n"
    "         and, under watch, made no hazardous fork of a kind not allowed; matrix: so under\n"
    "         every start method; attach: no hang seen)\n"
    "  1      a finding: a regression or a failed case (all, run); the program failed, crashed,\n"
    "         hung or timed out (exec, watch: its own exit status is in the summary and the\n"
    "         reports), or a process of it did; a hazardous fork (watch); not ok under a start\n"
    "         method (matrix); the attached program hung (attach); B regressed against A (diff).\n"
    "         Also when\n"
    "         forkcheck itself could not finish: it says why on stderr\n"
    "  2      usage error: one line on stderr, nothing run or written\n"
    "  128+N  forkcheck was interrupted by signal N (130 for Ctrl-C): the reports are partial";

}  // namespace fc::harness::exit_status
