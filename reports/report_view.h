// What the human-readable formats (HTML, Markdown, `forkcheck env`) show the same way: the matrix
// of cases by start method, a variant's outcome against its expectation, the environment as rows.
// Everything here reads the report (its model, reports/model/report_model.h) and nothing else;
// the JSON helpers are for the parts the model keeps as JSON (details, the environment).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"
#include "reports/svg_line_chart.h"

namespace fc::reports {

// obj[key] when it is an array, else an empty array: iterate a report's lists without copying
// them and without trusting their presence.
const nlohmann::json& list(const nlohmann::json& obj, const char* key);

// obj[key], or null where obj is not an object or lacks it: older or hand-made reports may.
const nlohmann::json& member(const nlohmann::json& obj, const char* key);

// obj[key] when it is an object, else nullptr (a report from elsewhere may lack it or differ).
const nlohmann::json* object_at(const nlohmann::json& obj, const char* key);

// obj[key] is true: absent, null or not a boolean is false.
bool is_true(const nlohmann::json& obj, const char* key);

// The matrix's columns: fork, spawn, forkserver, then any other start method a variant uses
// (e.g. "none"), in order of appearance.
std::vector<std::string> matrix_methods(const Report& report);

// The variants of `c` that use `method`, in the case's order (a method may have several).
std::vector<const Variant*> variants_with_method(const Case& c, const std::string& method);

// outcome == expected.
bool matched(const Variant& variant);

// A variant the run did not see to its end: never started (not_run), or cut short when forkcheck
// was interrupted (interrupted). Its outcome is "skip": it is neither as expected nor not, and no
// format counts it as a mismatch, a regression or a failure.
bool unfinished(const Variant& variant);

// Ran to its end, and its outcome is not the one it expected.
bool mismatched(const Variant& variant);

// The outcome as every format shows it: "not run" or "not finished" for an unfinished variant,
// else its outcome.
std::string outcome_shown(const Variant& variant);

// "hang ✓ expected hang", "ok ✗ expected hang", "not run (expected ok)".
std::string outcome_vs_expected(const Variant& variant);

// What an outcome whose word alone could mislead says happened: "timeout" (which is not a hang)
// and "protocol-error" each get a clause ("the deadline passed while the process tree was not
// blocked": working, starved or asleep in a wait that ends by itself); "" for the rest, whose word
// and message say enough.
std::string outcome_meaning(const std::string& outcome);

// In words, what a mismatch means: "regression: ...", "the hazard did not show here: ...",
// ending "expected hang, observed timeout (the deadline passed while ...)".
std::string mismatch_meaning(const Variant& variant);

// The heading of a variant's stacks, saying when they were taken: "stacks of the hung process
// tree" only for a hang; a timeout's were taken at the deadline, while the tree was working.
std::string stacks_title(const Variant& variant);

// One thread of variant.stacks: "pid 7 tid 7 name [S futex_do_wait] in syscall futex".
std::string thread_line(const Thread& thread);

// A thread's Python frames (innermost first), as a traceback reads: "  File:LINE in FUNCTION" and
// the source line under it; at most `max_frames` of them ("  ..." after). "" when it has none.
std::string python_frames_text(const Thread& thread, size_t max_frames);

// Where a Python thread waits, in the program's own code: "train.py:13 in main", from its
// innermost frame outside Python's own library (the innermost frame when every one is inside it).
// "" when the thread has no Python frames.
std::string python_where(const Thread& thread);

// What each repro program that could not list its cases said (report.run.catalog_errors): their
// cases are missing from the report, which every format says at its top.
inline constexpr const char* kCatalogErrorsHeadline =
    "cases are missing from this report: a repro program could not list them";

const Case* find_case(const Report& report, const std::string& id);
// The case the reports feature first, as the catalog marks it (`featured`: the tiny NN trained
// by 5 workers); nullptr when the run has none.
const Case* featured_case(const Report& report);

// variant.details.workers (the case's own data), or an empty array.
const nlohmann::json& workers(const Variant& variant);

// The workers of a variant that did not end well (details.workers entries whose status is not
// ok), one line each, the same in every format: "worker 1 (pid 4242, fork): killed by SIGSEGV
// (Segmentation fault), 210 ms after the pool started". At most `max` lines, then one saying how
// many more.
std::vector<std::string> failed_workers(const Variant& variant, size_t max = 16);

// The tables a case put in a variant's details (details.tables: data, never markup), each cell
// as text: an integer as it is, any other number with 4 decimals, null as "". A row's status
// (ok, error, crash, hang, timeout, or "") is how the process it stands for ended.
struct DetailTable {
  struct Row {
    std::vector<std::string> cells;
    std::vector<bool> number;  // cells[i] was a number in the report (shown right-aligned)
    std::string status;
  };
  std::string title;
  std::vector<std::string> columns;
  std::vector<Row> rows;
};
std::vector<DetailTable> detail_tables(const Variant& variant);

// The charts a case put in a variant's details (details.charts): each series' y[i] is plotted at
// x = i. A chart with no point is left out.
struct DetailChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartSeries> series;
};
std::vector<DetailChart> detail_charts(const Variant& variant);

// A variant's details without its tables and charts, which the formats show as such.
nlohmann::json details_without_views(const Variant& variant);

struct EnvRow {
  std::string label;
  std::string value;
  bool block = false;  // several lines, shown preformatted (libtorch's build settings)
};
// The environment fingerprint (report.run.environment, or `forkcheck env`'s) as labelled rows.
std::vector<EnvRow> environment_rows(const Environment& env);

}  // namespace fc::reports
