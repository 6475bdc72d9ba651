// report.html: one self-contained page to attach to a ticket. Inline CSS and SVG only: no script,
// no font, no image, nothing fetched, so it opens the same offline, in a mail client or printed.
// Order: the key finding (reports/finding.h: red when something failed, green otherwise, with
// its fix), the counts, `forkcheck watch`'s hazards and their fixes (when the run is a watch), the
// matrix of cases by start method, the tiny NN trained by 5 workers, one section per case, the
// environment. Readable from 360 px wide up: below 600 px the matrix is a card per case, wide
// tables scroll inside their own box, <pre> and long words wrap. Catalog text written
// Markdown-style (`inline code`) is shown as <code>.
#include <algorithm>
#include <cstdio>
#include <string>

#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/subject_text.h"
#include "reports/svg_line_chart.h"
#include "reports/text.h"
#include "reports/watch_view.h"
#include "reports/watchdog_text.h"

namespace fc::reports {
namespace {

constexpr size_t kOutputCap = 16 * 1024;   // per stream shown; report.json keeps what was captured
constexpr size_t kDetailsCap = 64 * 1024;  // of a variant's pretty-printed details

using json = nlohmann::json;

std::string h(const std::string& s) { return html_escape(s); }
std::string h(const char* s) { return html_escape(s); }

// Catalog prose (descriptions, mechanism, expected_why, fixes) written Markdown-style: escaped as
// HTML first, then each `...` pair made <code>...</code>. A backtick without its pair, or an empty
// pair, stays as it is.
std::string rich(const std::string& s) {
  const std::string e = html_escape(s);
  std::string o;
  size_t at = 0;
  for (size_t open = e.find('`'); open != std::string::npos; open = e.find('`', at)) {
    const size_t close = e.find('`', open + 1);
    if (close == std::string::npos) break;
    if (close == open + 1) {  // ``: nothing to show as code
      o.append(e, at, close + 1 - at);
      at = close + 1;
      continue;
    }
    o.append(e, at, open - at);
    o += "<code>" + e.substr(open + 1, close - open - 1) + "</code>";
    at = close + 1;
  }
  return o + e.substr(at);
}

// An id attribute from a case or variant name.
std::string anchor(const std::string& prefix, const std::string& name) {
  std::string out = prefix;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return out;
}

const char* const kStyle = R"css(
:root { --ink:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --panel:#f6f8fa;
  --ok:#1a7f37; --ok-bg:#dafbe1; --error:#9a3412; --error-bg:#ffedd5; --crash:#b91c1c; --crash-bg:#fee2e2;
  --hang:#6d28d9; --hang-bg:#ede9fe; --timeout:#7c4a03; --timeout-bg:#fde68a;
  --protocol:#0f6b63; --protocol-bg:#ccfbf1; --skip:#57606a; --skip-bg:#eef1f4; --bad:#cf222e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 48px; color: var(--ink); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", "Noto Sans CJK JP", sans-serif;
  overflow-wrap: anywhere; -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 18px 0 6px; }
h4 { font-size: 15px; margin: 0 0 6px; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; font-size: 13px; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 4px 0 8px; }
a { color: #0550ae; }
.meta { color: var(--muted); margin: 0; }
.summary { margin: 10px 0 0; display: flex; flex-wrap: wrap; gap: 8px; }
.pill { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: 1px 10px; background: var(--panel); }
.pill.bad, .banner { border-color: var(--bad); color: var(--bad); font-weight: 600; }
.banner { border: 2px solid; border-radius: 6px; padding: 8px 12px; margin: 12px 0; background: #fff5f5; }
.key-finding { border: 2px solid var(--bad); border-left-width: 8px; border-radius: 8px; padding: 6px 16px 10px;
  margin: 12px 0 14px; background: #fff5f5; }
.key-finding h2 { font-size: 19px; color: var(--bad); border: 0; margin: 6px 0 4px; padding: 0; }
.key-finding.good { border-color: var(--ok); background: var(--ok-bg); }
.key-finding.good h2 { color: var(--ok); }
.key-finding ul.kf-facts { margin: 4px 0; padding-left: 20px; }
.key-finding .kf-fix { margin: 8px 0 2px; padding: 6px 10px; border-radius: 6px; background: var(--bg);
  border: 1px solid var(--line); }
.finding { border: 2px solid var(--bad); border-radius: 8px; padding: 4px 16px 10px; margin: 16px 0; background: #fff5f5; }
.finding h2 { color: var(--bad); border: 0; margin: 8px 0 4px; }
.finding.allowed { border-color: #d4a72c; background: #fff8c5; }
.finding.allowed h2 { color: #7c4a03; }
.finding.clean { border-color: var(--ok); background: var(--ok-bg); }
.finding.clean h2 { color: var(--ok); }
.hazard-kind { border-left: 4px solid var(--bad); padding: 2px 0 2px 12px; margin: 10px 0; }
.hazard-kind.allowed { border-left-color: #d4a72c; }
.hazard-kind h3 { margin: 4px 0; }
.hazard-kind .tag { font-size: 13px; font-weight: normal; color: #7c4a03; }
ol.fix { margin: 2px 0 6px; padding-left: 22px; }
ul.forks { margin: 4px 0; padding-left: 18px; }
.cell.hazards { border: 2px solid var(--bad); }
.cell .hz { display: block; color: var(--bad); font-weight: 600; font-size: 12px; }
table { border-collapse: collapse; width: 100%; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 6px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--panel); }
table.matrix { table-layout: fixed; min-width: 800px; }
table.matrix col.case { width: 24%; }
table.matrix col.verdict-col { width: 13%; }
table.matrix .verdict { font-size: 12px; padding: 1px 5px; white-space: normal; overflow-wrap: normal; }
table.matrix .case-title { display: block; font-weight: normal; color: var(--muted); font-size: 13px; }
.cell { border-radius: 5px; padding: 4px 7px; margin: 3px 0; border: 1px solid transparent; }
.cell .vname { display: block; font-size: 12px; color: var(--muted); }
.cell .res { font-weight: 600; font-size: 14px; }
.cell.none { color: var(--muted); text-align: center; }
.o-ok { background: var(--ok-bg); color: var(--ok); }
.o-error { background: var(--error-bg); color: var(--error); }
.o-crash { background: var(--crash-bg); color: var(--crash); }
.o-hang { background: var(--hang-bg); color: var(--hang); }
.o-timeout { background: var(--timeout-bg); color: var(--timeout); }
.o-protocol-error { background: var(--protocol-bg); color: var(--protocol); }
.o-skip { background: var(--skip-bg); color: var(--skip); }
.mismatch { border: 2px dashed var(--bad) !important; }
.mismatch .res::after { content: " (did not match)"; color: var(--bad); }
.legend-row { margin: 8px 0 0; font-size: 13px; color: var(--muted); display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.legend-row .cell { display: inline-block; margin: 0; }
.verdict { display: inline-block; border-radius: 5px; padding: 1px 8px; font-size: 13px; font-weight: 600; border: 1px solid; white-space: nowrap; }
.v-reproduced { color: #6d28d9; background: #f5f3ff; }
.v-not-reproduced { color: #0550ae; background: #ddf4ff; }
.v-regression { color: #fff; background: var(--bad); border-color: var(--bad); }
.v-skipped { color: var(--skip); background: var(--skip-bg); }
.v-ok { color: var(--ok); background: var(--ok-bg); }
.v-failed { color: #fff; background: var(--bad); border-color: var(--bad); }
.featured { background: #fbfcfd; border: 1px solid var(--line); border-radius: 10px; padding: 4px 20px 16px; margin-top: 28px; }
.featured h2 { border: 0; }
.grid2 { display: grid; grid-template-columns: minmax(260px, 1fr) minmax(420px, 2fr); gap: 18px; align-items: start; }
.grid2 > * { min-width: 0; }
.panel { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: var(--bg); }
.panel.o-error, .panel.o-crash, .panel.o-hang, .panel.o-timeout, .panel.o-protocol-error { border-left: 6px solid currentColor; }
.panel .msg { color: var(--ink); }
table.workers { font-size: 14px; margin: 6px 0 10px; overflow-wrap: normal; }
table.workers th, table.workers td { white-space: nowrap; }
table.workers td.msg { white-space: normal; min-width: 9em; }
table.workers td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg.chart { width: 100%; max-width: 640px; height: auto; display: block; }
svg.chart .grid { stroke: #e5e9ed; stroke-width: 1; }
svg.chart .axis { stroke: #8c959f; stroke-width: 1; }
svg.chart .tick, svg.chart .legend { font-size: 11px; fill: #424a53; }
svg.chart .axis-label { font-size: 12px; fill: #424a53; }
svg.chart polyline.series, svg.chart .legend-line { fill: none; stroke-width: 2; }
.case { margin-top: 30px; }
.case h2 .id { font-size: 14px; color: var(--muted); font-weight: normal; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
ul.failed-workers { margin: 0; padding-left: 18px; }
blockquote { margin: 4px 0 10px; padding: 6px 14px; border-left: 4px solid var(--line); background: var(--panel); }
.variant { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 10px 0; background: var(--bg); color: var(--ink); }
.variant h4 .tag { font-weight: normal; color: var(--muted); font-size: 13px; margin-left: 6px; }
.variant .badge { margin-left: 8px; border-radius: 5px; padding: 1px 8px; font-size: 13px; }
.note { border-left: 4px solid #d4a72c; background: #fff8c5; padding: 4px 10px; margin: 6px 0; }
.stack { margin: 4px 0; }
details > summary { cursor: pointer; color: var(--muted); }
table.env th { width: 220px; background: var(--panel); font-weight: 600; }
table.env pre { margin: 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
@media (max-width: 800px) { .grid2 { grid-template-columns: 1fr; } body { padding: 12px 12px 32px; } }
@media (max-width: 600px) {
  body { padding: 10px 10px 28px; }
  h1 { font-size: 22px; }
  h2 { font-size: 18px; margin-top: 26px; }
  .key-finding { padding: 4px 10px 8px; border-left-width: 6px; }
  .key-finding h2 { font-size: 17px; }
  .finding { padding: 2px 10px 8px; }
  .featured { padding: 2px 10px 10px; }
  .panel, .variant { padding: 8px 10px; }
  th, td { padding: 4px 6px; }
  /* the matrix: a card per case, each start method named above its cells */
  table.matrix { min-width: 0; table-layout: auto; }
  table.matrix colgroup, table.matrix thead { display: none; }
  table.matrix, table.matrix tbody, table.matrix tr, table.matrix th, table.matrix td { display: block; width: auto; }
  table.matrix tr { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 10px; padding: 6px 8px; }
  table.matrix th, table.matrix td { border: 0; padding: 2px 0; margin: 0; }
  table.matrix td[data-method]::before { content: attr(data-method); display: block; margin-top: 4px;
    font-size: 13px; font-weight: 600; color: var(--muted); }
  dl.facts { grid-template-columns: 1fr; gap: 0; }
  dl.facts dd { margin: 0 0 6px; }
  table.env, table.env tbody, table.env tr, table.env th, table.env td { display: block; width: auto; }
  table.env tr { border-bottom: 1px solid var(--line); }
  table.env th, table.env td { border: 0; }
  pre { padding: 6px 8px; }
  code, pre, .mono { font-size: 12.5px; }
}
@media print {
  @page { size: A4; margin: 12mm 10mm; }
  body { max-width: none; padding: 0; font-size: 9.5pt; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  h2 { break-after: avoid; margin-top: 18px; }
  h3, h4 { break-after: avoid; }
  table.matrix tr, .cell, svg.chart, table.workers tr, dl.facts, .panel.o-error, .panel.o-crash, .panel.o-hang,
  .panel.o-timeout, .panel.o-protocol-error { break-inside: avoid; }
  .grid2 { grid-template-columns: 1fr; gap: 10px; }
  .scroll { overflow: visible; }
  table.matrix { min-width: 0; }
  .key-finding { break-inside: avoid; }
  .featured { padding: 2px 12px 10px; }
  svg.chart { max-width: 520px; }
  pre, code { font-size: 8pt; }
  details > summary { color: var(--ink); }
  details::details-content { content-visibility: visible; display: block; }
  a { color: inherit; text-decoration: none; }
}
)css";

std::string verdict_badge(const Case& c) {
  const std::string v = c.verdict.empty() ? "skipped" : c.verdict;
  return "<span class=\"verdict v-" + h(v) + "\">" + h(v) + "</span>";
}

// `forkcheck watch`: a variant whose forks fail the watch says so in its cell, whatever its
// outcome.
std::string hazards_tag(const Variant& v) {
  const size_t n = watch_failing(v);
  if (n == 0) return "";
  return "<span class=\"hz\">" + counted(n, "hazardous fork", "hazardous forks") + "</span>";
}

// exec, watch, matrix: processes of the program that failed while it exited 0 fail it too.
std::string failed_tag(const Variant& v) {
  if (v.role != "subject") return "";
  const size_t n = failed_descendants(v).size();
  if (n == 0) return "";
  return "<span class=\"hz\">" + counted(n, "process", "processes") + " of it failed</span>";
}

std::string cell(const Variant& v) {
  const std::string o = or_else(v.outcome, "skip");
  const std::string failed = failed_tag(v);
  return "<div class=\"cell o-" + h(o) + (mismatched(v) ? " mismatch" : "") +
         (watch_failing(v) || !failed.empty() ? " hazards" : "") + "\" title=\"" +
         h(v.expected_why) + "\"><span class=\"vname\">" + h(or_else(v.name, "?")) + " \u00b7 " +
         h(v.role) + "</span><span class=\"res\">" + h(outcome_vs_expected(v)) + "</span>" +
         hazards_tag(v) + failed + "</div>";
}

// Hazardous forks listed in the finding (report.json has them all), and up to how many forks each
// one's advice is shown open.
constexpr size_t kForksShown = 50;
constexpr size_t kForksOpen = 5;

// One hazard kind found by `forkcheck watch`: what, why, and the fix in full.
std::string hazard_kind_block(const WatchFinding& finding) {
  const bool allowed = finding.allowed;
  const std::string title = !finding.title.empty() ? finding.title : or_else(finding.kind, "?");
  std::string o =
      "<div class=\"hazard-kind" + std::string(allowed ? " allowed" : "") + "\" id=\"" +
      anchor("hazard-", finding.title.empty() ? finding.kind : finding.title) + "\"><h3>" +
      h(title) + ": " + h(finding_forks(finding)) +
      (allowed ? " <span class=\"tag\">allowed (--allow " + h(finding.kind) + ")</span>" : "") +
      "</h3><p class=\"what\">" + rich(finding.what) + "</p><p class=\"why\"><b>why:</b> " +
      rich(finding.why) + "</p><p><b>fix:</b></p><ol class=\"fix\">";
  for (const std::string& line : finding.fix) o += "<li>" + rich(line) + "</li>";
  return o + "</ol></div>";
}

// `forkcheck watch`'s hazards, after the key finding: red when a fork fails the watch, with each
// hazard kind's advice and fix and every hazardous fork; amber when every hazard was allowed. What
// the key finding's headline already says is not said again.
std::string watch_finding(const Report& report) {
  std::string o;
  const std::string headline = key_finding(report).headline;
  for (const auto& run : watch_runs(report)) {
    const Variant& v = *run.variant;
    const auto forks = hazardous_forks(v);
    const size_t failing = watch_failing(v);
    const std::vector<WatchFinding>& findings = watch_findings(v);
    const std::string& command = v.description;
    if (failing == 0 && findings.empty()) {
      o += "<section class=\"finding clean\" id=\"finding\">"
           "<h2>forkcheck watch: no hazardous fork</h2><p>in <code>" +
           h(command) + "</code></p></section>\n";
      continue;
    }
    const bool program_ok = v.outcome == "ok";
    const std::string failure = watch_failure(v);
    const bool said = failing && headline.find(failure) != std::string::npos;
    o += "<section class=\"finding" + std::string(failing ? "" : " allowed") +
         "\" id=\"finding\"><h2>";
    if (failing)
      o += (said ? std::string("forkcheck watch failed: each hazard and its fix")
                 : "forkcheck watch failed: " + h(failure)) +
           "</h2><p>" +
           (program_ok ? (said ? std::string("")
                               : "<code>" + h(command) +
                                     "</code> ended ok, but forked while it was not safe to: ") +
                             "forkcheck exits 1."
            : exited_zero_but_processes_failed(v)
                ? "<code>" + h(command) + "</code> exited 0, but " +
                      h(descendants_failure_count(v)) +
                      ", and it forked while it was not safe to as well: forkcheck exits 1."
                : "<code>" + h(command) + "</code> itself failed (" + h(v.outcome) +
                      "), and forked while it was not safe to as well: forkcheck exits 1.") +
           " The fix for each hazard is below; to accept a kind knowingly, run it again with "
           "<code>--allow KIND</code>.</p>";
    else
      o += "forkcheck watch: every hazardous fork was of a kind allowed</h2><p><code>" +
           h(command) + "</code>: the forks are listed, and the fix for each hazard is below.</p>";
    for (const auto& f : findings) o += hazard_kind_block(f);
    o += "<h3>Hazardous forks</h3><ul class=\"forks\">";
    size_t shown = 0;
    for (const ForkEvent* f : forks) {
      if (shown++ == kForksShown) break;
      o += "<li><details" + std::string(forks.size() <= kForksOpen ? " open" : "") + "><summary>" +
           h(fork_failure_message(*f)) + "</summary><pre class=\"fork-advice\">" +
           h(fork_advice_text(*f)) + "</pre></details></li>";
    }
    if (forks.size() > kForksShown)
      o += "<li>and " + std::to_string(forks.size() - kForksShown) + " more in report.json</li>";
    if (const size_t more = unlisted_failing(v); more > 0)
      o += "<li>and " + std::to_string(more) + " more that fail, not listed in report.json</li>";
    o += "</ul></section>\n";
  }
  return o;
}

std::string page_header(const Report& report) {
  const Run& run = report.run;
  std::string o = "<header><h1>forkcheck report</h1><p class=\"meta\">" + h(report.tool.name) +
                  " " + h(report.tool.version);
  if (!run.started_at.empty()) o += " \u00b7 started " + h(run.started_at);
  if (run.duration_s) o += " \u00b7 took " + h(format_seconds(*run.duration_s));
  if (!run.argv.empty()) {
    std::string cmd;
    for (const auto& a : run.argv) cmd += (cmd.empty() ? "" : " ") + a;
    o += " \u00b7 <code>" + h(cmd) + "</code>";
  }
  return o + "</p></header>\n";
}

// The key finding, first on the page: red when something failed, green otherwise; the fix on its
// own line.
std::string key_finding_block(const Report& report) {
  const Finding f = key_finding(report);
  std::string o = "<section class=\"key-finding " + std::string(f.bad ? "bad" : "good") +
                  "\" id=\"key-finding\"><h2>" + h(f.bad ? "\u2717 " : "\u2713 ") + h(f.headline) +
                  "</h2>";
  if (!f.facts.empty()) {
    o += "<ul class=\"kf-facts\">";
    for (const auto& fact : f.facts) o += "<li>" + h(fact) + "</li>";
    o += "</ul>";
  }
  if (!f.fix.empty()) o += "<p class=\"kf-fix\"><b>Fix:</b> " + rich(f.fix) + "</p>";
  return o + "</section>\n";
}

// The counts, and what keeps the run from being read as whole (unfinished, catalog errors).
std::string overview(const Report& report) {
  const Run& run = report.run;
  const Summary& s = report.summary;
  const bool ok = s.ok.value_or(true);
  std::string o = "<div class=\"overview\"><div class=\"summary\">";
  if (is_subject_report(report)) {
    // A user's program: how each run of it ended, not the catalog's counts.
    for (const auto& item : subject_summary(report))
      o += "<span class=\"pill" + std::string(item.bad ? " bad" : "") + "\">" + h(item.text) +
           "</span>";
    o += "</div>";
  } else {
    o += "<span class=\"pill\">" + std::to_string(s.cases) + " cases, " +
         std::to_string(s.variants) + " variants</span>";
    for (const auto& [verdict, n] : s.by_verdict)
      o += "<span class=\"pill" +
           std::string(verdict == "regression" || verdict == "failed" ? " bad" : "") + "\">" +
           h(verdict) + " " + std::to_string(n) + "</span>";
    o += "<span class=\"pill" + std::string(s.mismatches ? " bad" : "") + "\">" +
         std::to_string(s.mismatches) + " outcomes differ from expectation</span>";
    if (s.harness_failures)
      o += "<span class=\"pill bad\">harness failures " + std::to_string(s.harness_failures) +
           "</span>";
    o += "<span class=\"pill" + std::string(ok ? "" : " bad") + "\">" +
         (ok                          ? "every fix behaved"
          : any_watch_failing(report) ? "hazardous forks found"
                                      : "a fix misbehaved or the harness failed") +
         "</span></div>";
  }
  if (!run.complete)
    o += "<p class=\"banner\">This run did not finish: variants that had not ended are shown as "
         "not run.</p>";
  else if (run.interrupted)
    o += "<p class=\"banner\">This run was interrupted: variants that had not ended are shown as "
         "not run.</p>";
  if (const auto& errors = report.run.catalog_errors; !errors.empty()) {
    o += "<div class=\"banner\" id=\"catalog-errors\">" + h(kCatalogErrorsHeadline) + ":<ul>";
    for (const auto& e : errors) o += "<li>" + h(e) + "</li>";
    o += "</ul></div>";
  }
  return o + "</div>\n";
}

std::string matrix_section(const Report& report) {
  // A user's program: its summary says how each run of it ended; there is no catalog.
  if (is_subject_report(report)) return "";
  const auto methods = matrix_methods(report);
  std::string o =
      "<section id=\"matrix\"><h2>Cases by start method</h2><div class=\"scroll\"><table "
      "class=\"matrix\"><colgroup><col class=\"case\"><col class=\"verdict-col\">";
  const std::string method_width = std::to_string(63 / static_cast<int>(methods.size())) + "%";
  for (size_t i = 0; i < methods.size(); ++i) o += "<col style=\"width:" + method_width + "\">";
  o += "</colgroup><thead><tr><th class=\"case\">case</th><th>verdict</th>";
  for (const auto& m : methods) o += "<th>" + h(m) + "</th>";
  o += "</tr></thead><tbody>";
  for (const Case& c : report.cases) {
    const std::string id = or_else(c.id, "?");
    o += "<tr class=\"case-row\" id=\"" + anchor("row-", id) + "\" data-case=\"" + h(id) +
         "\"><th class=\"case\"><a href=\"#" + anchor("case-", id) + "\">" + h(id) +
         "</a><span class=\"case-title\">" + h(c.title) + "</span></th><td>" + verdict_badge(c) +
         "</td>";
    for (const auto& m : methods) {
      o += "<td data-method=\"" + h(m) + "\">";
      auto vs = variants_with_method(c, m);
      if (vs.empty()) o += "<div class=\"cell none\">\u2014</div>";
      for (const Variant* v : vs) o += cell(*v);
      o += "</td>";
    }
    o += "</tr>";
  }
  o += "</tbody></table></div><div class=\"legend-row\">Each cell: variant \u00b7 role, then "
       "observed \u2713/\u2717 expected. ";
  for (const char* outcome :
       {"ok", "error", "crash", "hang", "timeout", "protocol-error", "skip"}) {
    const std::string meaning = outcome_meaning(outcome);
    o += "<span class=\"cell o-" + std::string(outcome) + "\"" +
         (meaning.empty() ? "" : " title=\"" + h(meaning) + "\"") + ">" + outcome + "</span>";
  }
  o += "<span class=\"cell o-ok mismatch\">dashed red: outcome differs from the "
       "expectation</span></div></section>\n";
  return o;
}

// The colour of a process's end: the outcome's own, "error" for any other word.
std::string outcome_class(const std::string& status) {
  for (const char* o : {"ok", "error", "crash", "hang", "timeout"})
    if (status == o) return status;
  return "error";
}

// The first cell of a row that is not a number: the one that says how its process ended.
size_t first_text_cell(const DetailTable::Row& row) {
  for (size_t i = 0; i < row.cells.size(); ++i)
    if (!row.cells[i].empty() && !row.number[i]) return i;
  return row.cells.size();
}

// What a case measured and put in its details as tables and charts (data; the case says what they
// hold): each table, then each chart, titled with the case and variant.
std::string detail_views(const Case& c, const Variant& v) {
  std::string o;
  const std::string whose = c.id + " / " + v.name + ": ";
  for (const auto& t : detail_tables(v)) {
    o += "<div class=\"scroll\"><table class=\"workers\"><caption>" + h(t.title) +
         "</caption><thead><tr>";
    for (const auto& col : t.columns) o += "<th>" + h(col) + "</th>";
    o += "</tr></thead><tbody>";
    for (const auto& row : t.rows) {
      o += "<tr>";
      for (size_t i = 0; i < row.cells.size(); ++i) {
        // A row that stands for a process: its first text cell says how it ended, coloured so.
        o += row.number[i] ? "<td class=\"num\">"
             : !row.status.empty() && i == first_text_cell(row)
                 ? "<td class=\"msg o-" + h(outcome_class(row.status)) + "\">"
                 : "<td>";
        o += h(row.cells[i]) + "</td>";
      }
      o += "</tr>";
    }
    o += "</tbody></table></div>";
  }
  for (auto& chart : detail_charts(v))
    o += svg_line_chart(chart.series, {whose + chart.title, chart.x_label, chart.y_label});
  return o;
}

// The tiny NN first: the source's own demo, where fork fails and spawn trains.
std::string featured(const Report& report) {
  const Case* c = featured_case(report);
  if (!c) return "";
  std::string o = "<section class=\"featured\" id=\"featured\"><h2>" +
                  h(c->title.empty() ? c->id : c->title) + "</h2><p>" + rich(c->reported) +
                  "</p><div class=\"grid2\"><div>";
  for (const Variant& v : c->variants) {
    if (v.start_method != "fork") continue;
    size_t failed = 0, total = 0;
    for (const auto& w : workers(v)) {
      ++total;
      if (field(w, "status") != "ok") ++failed;
    }
    o += "<div class=\"panel o-" + h(or_else(v.outcome, "skip")) +
         (mismatched(v) ? " mismatch" : "") + "\"><h3>fork: <code>" + h(v.name) +
         "</code> \u2014 " + h(outcome_vs_expected(v)) + "</h3><p class=\"msg\">" + h(v.message) +
         "</p>";
    if (total)
      o += "<p class=\"msg\">" + std::to_string(failed) + " of " + std::to_string(total) +
           " workers failed.</p>";
    o += "<p class=\"msg\"><small>" + rich(v.expected_why) + "</small></p></div>";
  }
  o += "</div><div>";
  for (const Variant& v : c->variants) {
    if (v.start_method == "fork") continue;
    o += "<div class=\"panel\"><h3>" + h(v.start_method) + ": <code>" + h(v.name) +
         "</code> \u2014 " + h(outcome_vs_expected(v)) + "</h3><p>" + h(v.message) + "</p>" +
         detail_views(*c, v) + "</div>";
  }
  return o + "</div></div></section>\n";
}

std::string output_block(const char* label, const std::string& text, const char* key) {
  if (text.empty()) return "";
  return "<h5>" + std::string(label) + "</h5><pre class=\"" + key + "\">" +
         h(cap_text(text, kOutputCap)) + "</pre>";
}

std::string stacks_block(const Variant& v) {
  if (v.stacks.empty()) return "";
  std::string o = "<details open class=\"stacks\"><summary>" + h(stacks_title(v)) + " (" +
                  std::to_string(v.stacks.size()) + " threads" +
                  (v.stacks_method.empty() ? "" : ", by " + h(v.stacks_method)) + ")</summary>";
  if (!v.stacks_note.empty()) o += "<p>" + h(v.stacks_note) + "</p>";
  if (!v.stacks_python_note.empty()) o += "<p>" + h(v.stacks_python_note) + "</p>";
  for (const Thread& t : v.stacks) {
    std::string text = thread_line(t);
    if (const std::string py = python_frames_text(t, 64); !py.empty())
      text += "\nPython:\n" + py + "native:";
    int i = 0;
    for (const auto& f : t.frames) text += "\n  #" + std::to_string(i++) + " " + f;
    o += "<pre class=\"stack\">" + h(text) + "</pre>";
  }
  return o + "</details>";
}

std::string variant_block(const Case& c, const Variant& v) {
  const std::string o_ = or_else(v.outcome, "skip");
  const bool subject = v.role == "subject";
  // A user's program: under which start method it ran (matrix), or nothing of a catalog's.
  const std::string head =
      !subject ? "<code>" + h(or_else(v.name, "?")) + "</code><span class=\"tag\">" +
                     h(v.start_method) + " \u00b7 " + h(v.role) + "</span>"
      : c.variants.size() > 1 ? "under <code>" + h(or_else(v.start_method, "?")) + "</code>"
                              : std::string("the program");
  std::string o = "<div class=\"variant\" id=\"" + anchor("variant-", c.id + "-" + v.name) +
                  "\"><h4>" + head + "<span class=\"badge o-" + h(o_) +
                  (mismatched(v) && !subject ? " mismatch" : "") + "\"><span class=\"res\">" +
                  h(outcome_vs_expected(v)) + "</span></span></h4>";
  if (!v.description.empty()) o += "<p>" + rich(v.description) + "</p>";
  // A user's program was expected nothing: what it did is the fact.
  o += "<dl class=\"facts\">";
  if (!subject)
    o += "<dt>expected</dt><dd><b>" + h(or_else(v.expected, "?")) +
         "</b>: " + rich(v.expected_why) + "</dd>";
  o += "<dt>observed</dt><dd><b>" + h(outcome_shown(v)) + "</b>";
  o += " after " + h(format_seconds(v.duration_s));
  if (v.exit.code) o += ", exit code " + std::to_string(*v.exit.code);
  if (v.exit.signal)
    o += ", signal " + std::to_string(*v.exit.signal) +
         (v.exit.signal_name.empty() ? "" : " (" + h(v.exit.signal_name) + ")");
  o += "</dd>";
  if (mismatched(v)) o += "<dt>meaning</dt><dd><b>" + h(mismatch_meaning(v)) + "</b></dd>";
  if (!v.message.empty()) o += "<dt>message</dt><dd>" + h(v.message) + "</dd>";
  if (const auto failed = failed_workers(v); !failed.empty()) {
    o += "<dt>workers that failed</dt><dd><ul class=\"failed-workers\">";
    for (const auto& line : failed) o += "<li>" + h(line) + "</li>";
    o += "</ul></dd>";
  }
  if (v.hang)  // a step that stalled; "hung" only if it was ended so
    o += std::string("<dt>") + (o_ == "hang" ? "hung at" : "stalled at") + "</dt><dd>" +
         h(v.hang->step) + " (pid " + std::to_string(v.hang->pid) + ")</dd>";
  if (const std::string tree = tree_facts(v.watchdog, v.outcome); !tree.empty())
    o += "<dt>process tree</dt><dd class=\"tree\">" + h(tree) + "</dd>";
  if (v.protocol_error)
    o += "<dt>protocol error</dt><dd>" + h(v.protocol_error->why) +
         "<pre class=\"protocol-line\">" + h(cap_text(v.protocol_error->line, kProtocolLineCap)) +
         "</pre></dd>";
  o += "</dl>";
  if (!v.note.empty()) o += "<p class=\"note\">" + rich(v.note) + "</p>";
  o += output_block("stdout", v.stdout_text, "stdout") +
       output_block("stderr", v.stderr_text, "stderr") + stacks_block(v);
  // The featured case's tables and charts are at the top of the page.
  if (!c.featured) o += detail_views(c, v);
  if (const json details = details_without_views(v); !details.empty()) {
    std::string text = details.dump(2, ' ', false, json::error_handler_t::replace);
    o += std::string("<details class=\"details\"><summary>details (") +
         (subject ? "what forkcheck recorded" : "what the case measured") + ")</summary><pre>" +
         h(cap_text(text, kDetailsCap)) + "</pre></details>";
  }
  return o + "</div>";
}

std::string case_section(const Case& c) {
  const std::string id = or_else(c.id, "?");
  const auto& variants = c.variants;
  // exec, watch, matrix, attach: the user's own program, no case of a catalog.
  const bool subject = !variants.empty() && variants[0].role == "subject";
  std::string o = "<section class=\"case\" id=\"" + anchor("case-", id) + "\"><h2>" +
                  verdict_badge(c) + " " + h(c.title.empty() ? id : c.title) +
                  (subject ? "" : " <span class=\"id\">" + h(id) + "</span>") + "</h2>";
  o += "<p>" + h(c.verdict_reason) + "</p><dl class=\"facts\">";
  // The user's own command (exec, watch) has no source document.
  if (const Source& s = c.source; !(s.document.empty() && s.url.empty())) {
    std::string title = "\u201c" + h(s.title) + "\u201d";
    // Only a web address becomes a link: the report may be opened from a file on a shared drive.
    if (s.url.rfind("https://", 0) == 0) title = "<a href=\"" + h(s.url) + "\">" + title + "</a>";
    o += "<dt>source</dt><dd>" + title + " by " + h(s.author);
    if (!s.document.empty()) o += " (document " + h(s.document) + ")";
    o += "</dd>";
  }
  if (!c.platforms.empty()) o += "<dt>applies to</dt><dd>" + h(c.platforms) + "</dd>";
  o += "</dl>";
  if (!c.reported.empty())
    o += "<h3>What the source reported</h3><blockquote>" + rich(c.reported) + "</blockquote>";
  if (!c.mechanism.empty()) o += "<h3>Mechanism</h3><p>" + rich(c.mechanism) + "</p>";
  if (c.featured && std::any_of(variants.begin(), variants.end(), [](const Variant& v) {
        return !detail_tables(v).empty() || !detail_charts(v).empty();
      }))
    o += "<p>What its variants measured is shown <a href=\"#featured\">at the top</a>.</p>";
  o += !subject              ? "<h3>Variants</h3>"
       : variants.size() > 1 ? "<h3>Under each start method</h3>"
                             : "<h3>How it ran</h3>";
  for (const Variant& v : variants) o += variant_block(c, v);
  return o + "</section>\n";
}

std::string environment_dl(const Report& report) {
  std::string o = "<section id=\"environment\"><h2>Environment</h2><table class=\"env\"><tbody>";
  for (const auto& row : environment_rows(report.run.environment)) {
    o += "<tr><th>" + h(row.label) + "</th><td>";
    o += row.block ? "<pre>" + h(row.value) + "</pre>" : h(row.value);
    o += "</td></tr>";
  }
  return o + "</tbody></table></section>\n";
}

class HtmlReporter final : public Reporter {
 public:
  std::string file_name() const override { return "report.html"; }
  std::string render(const Report& report) const override {
    std::string o =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>" +
        (is_subject_report(report)  // a user's program: its command, as its case's title says
             ? h(or_else(report.cases.front().title, "forkcheck report"))
             : "forkcheck report: " + std::to_string(report.summary.cases) + " cases") +
        "</title><style>" + kStyle + "</style></head>\n<body>\n";
    o += page_header(report) + key_finding_block(report) + overview(report) +
         watch_finding(report) + matrix_section(report) + featured(report);
    for (const Case& c : report.cases) o += case_section(c);
    o += environment_dl(report);
    o += "<footer>Rendered from report.json (schema " + h(or_else(report.schema_version, "?")) +
         ") by forkcheck; <code>forkcheck report --from report.json</code> renders it "
         "again.</footer>\n</body></html>\n";
    return o;
  }
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace fc::reports
