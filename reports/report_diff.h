// `forkcheck diff A B`: what changed from report A to report B (two report.json contents), and
// the differences of environment that may explain it, the likeliest first. A pure function of the
// two reports: no I/O, so a test builds both by hand. Rendered by diff_to_json() and
// diff_markdown() here, and on the console by harness/commands/diff_command.cc.
//
// "B regressed against A" (forkcheck diff exits 1) when B fails where A did not, exactly:
//   - a variant run in both whose role is fix (or subject: exec/watch's program) came out as
//     expected in A and not in B;
//   - a case in both whose verdict is failing in B (regression, failed) and was not in A (a
//     watch that made a hazardous fork: its program ended ok, its verdict is failed);
//   - or B's summary.ok is false where A's was true, and neither of the above says why (harness
//     failures, a repro program that could not list its cases, a failing case only in B).
// Never a regression: a hazard variant that no longer fails as documented (not-reproduced is a
// fact about the machine, as `forkcheck run` says), a case or variant skipped or not run to its
// end on one side (an interrupted run: coverage), one present on one side only (coverage), or a
// field an older 1.x report lacks (unknown, not different).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

namespace fc::reports {

// The schema major version diff reads (reports/run_log.h's kSchemaVersion is 1.x).
inline constexpr int kDiffSchemaMajor = 1;

// Why `report` cannot be compared, one line naming the problem; "" when it can: a JSON object
// made by forkcheck, with a schema_version 1.x (its run header's too, for a folded run log), and
// a list of cases, each with an id.
std::string unreadable_report(const nlohmann::json& report);

// Why A and B cannot be compared, or "": a report of the catalog's cases (all, run) against one
// of the user's own program (exec, watch).
std::string incomparable_reports(const Report& a, const Report& b);
// A report of the user's own program (exec, watch) rather than of the catalog's cases.
bool is_program_report(const Report& report);

// How a change bears on "B regressed against A", in the order they are shown.
enum class Effect {
  kRegression,   // B fails where A did not
  kChanged,      // different, neither better nor worse (a hazard that no longer shows)
  kImprovement,  // A failed where B does not
  kCoverage,     // run on one side only: skipped, not selected, or not in that catalog
};
const char* effect_name(Effect e);  // "regression", "changed", "improvement", "coverage"

struct CaseChange {
  // "verdict", "outcome" (outcome or expectation), "skip-reason", "only-in-a", "only-in-b",
  // "summary" (B's run ok or not, when no case says why)
  std::string kind;
  std::string case_id;
  std::string variant;  // empty for a change of the whole case
  std::string role;     // hazard, fix, subject; empty for a case
  std::string a, b;     // the outcome (verdict, ...) on each side; empty where absent
  std::string expected_a, expected_b;  // a variant's expected outcomes
  Effect effect = Effect::kChanged;
  std::string why;  // one line for a person: the verdict's reason, the skip's, ...
};

// One fact of the environment that differs, e.g. "threads.omp_get_max_threads: 1 -> 8".
struct EnvDifference {
  std::string name;
  std::string a, b;
  // The changed cases and variants ("a-case/fork") whose hazard depends on this fact
  // (environment_diff.cc's table): it may explain them. Empty: it differs, linked to no change.
  std::vector<std::string> may_explain;
};

// What a report says of itself, for the heading.
struct ReportSide {
  std::string command, started_at, forkcheck_version, schema_version;
  bool complete = true;  // false: the run was interrupted or its log has no end
};

struct ReportDiff {
  ReportSide a, b;
  std::vector<CaseChange> changes;         // by case, the case with the worst effect first
  std::vector<EnvDifference> environment;  // those that may explain a change first
  bool regressed = false;
  bool identical() const { return changes.empty() && environment.empty(); }
  size_t count(Effect e) const;
};

// Compares two reports (read_report() of what unreadable_report() and incomparable_reports()
// accept). Variants are matched by name within cases matched by id (exec and watch: the one case
// of each). A field a report lacks reads as the model's default: "" (unknown, never different)
// for an outcome, an expectation or a verdict, and a summary that does not say ok.
ReportDiff diff_reports(const Report& a, const Report& b);

// The differences of environment between two reports' run.environment (and run.options,
// tool.version), each linked to the `changes` it may explain, those first.
std::vector<EnvDifference> diff_environment(const Report& a, const Report& b,
                                            const std::vector<CaseChange>& changes);

// --json: {"a": {...}, "b": {...}, "regressed", "identical", "counts", "changes": [...],
// "environment": [...]}; `a_path`, `b_path` name the inputs.
nlohmann::json diff_to_json(const ReportDiff& diff, const std::string& a_path,
                            const std::string& b_path);

// For a ticket, at most `max_bytes` (a GitHub comment takes 65,536 characters): the verdict
// line, the changes as a table, the environment differences, likeliest first.
inline constexpr size_t kDiffMarkdownMaxBytes = 32 * 1024;
std::string diff_markdown(const ReportDiff& diff, const std::string& a_path,
                          const std::string& b_path, size_t max_bytes = kDiffMarkdownMaxBytes);

}  // namespace fc::reports
