// summary.md: for a bug ticket or $GITHUB_STEP_SUMMARY (which refuses more than 1 MiB). The key
// finding first (reports/finding.h), as a GitHub alert: CAUTION when something failed, NOTE
// otherwise; then the header, `forkcheck watch`'s hazards and their fixes, the matrix, the
// verdicts, the tiny NN's workers, the environment; each case's variants folded in <details>.
// Always under the size cap: outputs and details are cut shorter and shorter until it fits, and
// as a last resort whole parts are left out, with a line saying so. The finding is never cut.
#include <algorithm>
#include <string>
#include <vector>

#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/subject_text.h"
#include "reports/text.h"
#include "reports/watch_view.h"
#include "reports/watchdog_text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

struct Limits {
  size_t output;   // bytes of stdout / stderr per variant (0: left out)
  size_t details;  // bytes of a variant's details JSON (0: left out)
  size_t message;  // bytes of a message
  size_t frames;   // frames shown per thread of a stack (0: stacks left out)
};
const Limits kLevels[] = {
    {8 * 1024, 16 * 1024, 4 * 1024, 40},
    {1024, 2 * 1024, 1024, 12},
    {0, 0, 400, 0},
};

std::string md(const std::string& s, size_t cap) { return md_inline(cap_text(s, cap)); }

// Appends whole parts while they fit, so that what is cut never leaves a table or a fence open.
class Budget {
 public:
  Budget(size_t cap, size_t reserve) : cap_(cap), reserve_(reserve) {}
  bool add(const std::string& part) {
    if (out_.size() + part.size() + reserve_ > cap_) {
      ++omitted_;
      return false;
    }
    out_ += part;
    return true;
  }
  void add_reserved(const std::string& part) { out_ += part; }  // what the reserve was kept for
  size_t omitted() const { return omitted_; }
  std::string& text() { return out_; }

 private:
  std::string out_;
  size_t cap_, reserve_, omitted_ = 0;
};

std::string summary_header(const Report& report) {
  const Run& run = report.run;
  const Summary& s = report.summary;
  const bool ok = s.ok.value_or(true);
  std::string o = "# forkcheck report\n\n" +
                  md_inline(or_else(report.tool.name, "forkcheck") + " " + report.tool.version);
  if (!run.started_at.empty()) o += " \u00b7 started " + md_inline(run.started_at);
  if (run.duration_s) o += " \u00b7 took " + format_seconds(*run.duration_s);
  if (is_subject_report(report)) {
    // A user's program: how each run of it ended, not the catalog's counts.
    std::string items;
    for (const auto& item : subject_summary(report))
      items += (items.empty() ? "" : " \u00b7 ") +
               (item.bad ? "**" + md_inline(item.text) + "**" : md_inline(item.text));
    o += "\n\n" + items + "\n\n";
  } else {
    o += "\n\n**" + std::to_string(s.cases) + " cases, " + std::to_string(s.variants) +
         " variants**";
    for (const auto& [verdict, n] : s.by_verdict)
      o += " \u00b7 " + md_inline(verdict) + " " + std::to_string(n);
    o += " \u00b7 " + std::to_string(s.mismatches) + " outcomes differ from expectation \u00b7 " +
         (ok                          ? "every fix behaved"
          : any_watch_failing(report) ? "**hazardous forks found**"
                                      : "**a fix misbehaved or the harness failed**") +
         "\n\n";
  }
  if (!run.complete)
    o += "> **This run did not finish**: variants that had not ended are shown as not run.\n\n";
  if (const auto& errors = run.catalog_errors; !errors.empty()) {
    o += "> **" + std::string(kCatalogErrorsHeadline) + "**:\n";
    for (const auto& e : errors) o += "> - " + md_inline(e) + "\n";
    o += "\n";
  }
  return o;
}

// The key finding as a GitHub alert: the headline, the facts a bullet each, the fix. Each part is
// capped, so that the whole stays a small share of the size cap.
constexpr size_t kFindingFacts = 12;
std::string key_finding_text(const Finding& f) {
  std::string o =
      std::string("> [!") + (f.bad ? "CAUTION" : "NOTE") + "]\n> **" + md(f.headline, 600) + "**\n";
  if (!f.facts.empty()) o += ">\n";
  for (size_t i = 0; i < f.facts.size() && i < kFindingFacts; ++i)
    o += "> - " + md(f.facts[i], 400) + "\n";
  if (!f.fix.empty()) o += ">\n> **Fix:** " + md(f.fix, 2000) + "\n";
  return o + "\n";
}

constexpr size_t kForksWithAdvice = 10;  // hazardous forks shown with their advice in full
constexpr size_t kForksListed = 50;      // and listed a line each

// One hazard kind found by `forkcheck watch`: what, why, and the fix in full.
std::string hazard_kind_text(const WatchFinding& finding) {
  const bool allowed = finding.allowed;
  std::string o =
      "### " + md_inline(!finding.title.empty() ? finding.title : or_else(finding.kind, "?")) +
      ": " + md_inline(finding_forks(finding)) +
      (allowed ? " (allowed: --allow " + md_inline(finding.kind) + ")" : "") + "\n\n" +
      md_inline(finding.what) + "\n\n**why:** " + md_inline(finding.why) + "\n\n**fix:**\n\n";
  size_t i = 0;
  for (const std::string& line : finding.fix)
    o += std::to_string(++i) + ". " + md_inline(line) + "\n";
  return o + "\n";
}

// `forkcheck watch`'s hazards, after the header: each hazard kind's advice and fix and the
// hazardous forks. The key finding above is the alert (CAUTION when a fork fails the watch); what
// its headline already says is not said again.
std::string watch_finding(const Report& report, const std::string& headline) {
  std::string o;
  for (const auto& run : watch_runs(report)) {
    const Variant& v = *run.variant;
    const size_t failing = watch_failing(v);
    const std::vector<WatchFinding>& findings = watch_findings(v);
    const std::string command = md_inline(v.description);
    if (failing == 0 && findings.empty()) {
      o += "**forkcheck watch: no hazardous fork** in " + command + ".\n\n";
      continue;
    }
    if (failing) {
      const bool program_ok = v.outcome == "ok";
      const std::string failure = watch_failure(v);
      const bool said = headline.find(failure) != std::string::npos;
      o += (said ? std::string("## forkcheck watch failed: each hazard and its fix")
                 : "## \u26d4 forkcheck watch failed: " + md_inline(failure)) +
           "\n\n" +
           (program_ok ? (said ? std::string("")
                               : command + " ended ok, but forked while it was not safe to: ") +
                             "forkcheck exits 1."
            : exited_zero_but_processes_failed(v)
                ? command + " exited 0, but " + md_inline(descendants_failure_count(v)) +
                      ", and it forked while it was not safe to as well: forkcheck exits 1."
                : command + " itself failed (" + md_inline(v.outcome) +
                      "), and forked while it was not safe to as well: forkcheck exits 1.") +
           " The fix for each hazard is below; to accept a kind knowingly, run it again with "
           "--allow KIND.\n\n";
    } else {
      o += "## forkcheck watch: every hazardous fork was of a kind allowed\n\n" + command +
           ": the forks are listed, and the fix for each hazard is below.\n\n";
    }
    for (const auto& f : findings) o += hazard_kind_text(f);
    o += "### Hazardous forks\n\n";
    const auto forks = hazardous_forks(v);
    size_t shown = 0;
    for (const ForkEvent* f : forks) {
      if (shown == kForksListed) break;
      o += "- " + md_inline(fork_failure_message(*f)) + "\n";
      if (shown++ < kForksWithAdvice)
        o += "\n<details><summary>fork " + std::to_string(f->index) +
             ": what, why, the fix</summary>\n\n" + md_code_block(fork_advice_text(*f)) +
             "\n</details>\n\n";
    }
    if (forks.size() > kForksListed)
      o += "- and " + std::to_string(forks.size() - kForksListed) + " more in report.json\n";
    if (const size_t more = unlisted_failing(v); more > 0)
      o += "- and " + std::to_string(more) + " more that fail, not listed in report.json\n";
    o += "\n";
  }
  return o;
}

std::string cell_text(const Variant& v) {
  std::string t =
      "**" + md_inline(or_else(v.name, "?")) + "**: " + md_inline(outcome_vs_expected(v));
  if (const size_t n = watch_failing(v); n > 0)
    t += " \u26d4 " + counted(n, "hazardous fork", "hazardous forks");
  return mismatched(v) ? t + " \u26a0\ufe0f" : t;
}

std::vector<std::string> matrix_paragraphs(const Report& report) {
  // A user's program: its summary line says how each run of it ended; there is no catalog.
  if (is_subject_report(report)) return {};
  const auto methods = matrix_methods(report);
  std::string head = "## Cases by start method\n\n| case | verdict |";
  std::string rule = "|---|---|";
  for (const auto& m : methods) head += " " + md_inline(m) + " |", rule += "---|";
  std::vector<std::string> parts = {head + "\n" + rule + "\n"};
  for (const Case& c : report.cases) {
    std::string row = "| **" + md_inline(or_else(c.id, "?")) + "** " + md_inline(c.title) + " | " +
                      md_inline(c.verdict) + " |";
    for (const auto& m : methods) {
      std::string cellv;
      for (const Variant* v : variants_with_method(c, m))
        cellv += (cellv.empty() ? "" : "<br>") + cell_text(*v);
      row += " " + (cellv.empty() ? std::string("\u2014") : cellv) + " |";
    }
    parts.push_back(row + "\n");
  }
  parts.push_back("\n\u2713 the outcome was the expected one; \u2717 \u26a0\ufe0f it was not.\n\n");
  return parts;
}

std::vector<std::string> verdicts(const Report& report, const Limits& lim) {
  std::vector<std::string> parts = {"## Verdicts\n\n"};
  for (const Case& c : report.cases) {
    std::string p = "- **" + md_inline(or_else(c.id, "?")) + "**: " + md_inline(c.verdict) + ": " +
                    md(c.verdict_reason, lim.message) + "\n";
    for (const Variant& v : c.variants)
      if (mismatched(v))
        p += "  - " + md_inline(or_else(v.name, "?")) + ": " +
             md(mismatch_meaning(v), lim.message) + "\n";
    parts.push_back(p);
  }
  parts.push_back("\n");
  return parts;
}

// The tables a case put in a variant's details, as Markdown tables.
std::string detail_tables_md(const Variant& v, const Limits& lim) {
  std::string o;
  for (const auto& t : detail_tables(v)) {
    o += "*" + md_inline(t.title) + "*\n\n|";
    for (const auto& col : t.columns) o += " " + md_inline(col) + " |";
    o += "\n|";
    for (size_t i = 0; i < t.columns.size(); ++i) o += "---|";
    o += "\n";
    for (const auto& row : t.rows) {
      o += "|";
      for (const auto& cell : row.cells) o += " " + md(cell, lim.message) + " |";
      o += "\n";
    }
    o += "\n";
  }
  return o;
}

std::string featured(const Report& report, const Limits& lim) {
  const Case* c = featured_case(report);
  if (!c) return "";
  std::string o = "## " + md_inline(c->title.empty() ? c->id : c->title) + "\n\n";
  for (const Variant& v : c->variants) {
    o += "**" + md_inline(v.start_method) + "** (" + md_inline(v.name) +
         "): " + md_inline(outcome_vs_expected(v)) + ": " + md(v.message, lim.message) + "\n\n";
    o += detail_tables_md(v, lim);
  }
  const bool charts = std::any_of(c->variants.begin(), c->variants.end(),
                                  [](const Variant& v) { return !detail_charts(v).empty(); });
  return o + (charts ? "Its charts are drawn in report.html.\n\n" : "");
}

// `tables`: the variant's own tables are shown here (the featured case's are at the top).
std::string variant_details(const Variant& v, const Limits& lim, std::size_t of, bool tables) {
  // A user's program: under which start method it ran (matrix), or the program; no roles.
  const std::string head = v.role != "subject"
                               ? md_inline(or_else(v.name, "?")) + " (" +
                                     md_inline(v.start_method) + ", " + md_inline(v.role) + ")"
                           : of > 1 ? "under " + md_inline(or_else(v.start_method, "?"))
                                    : std::string("the program");
  std::string o = "#### " + head + ": " + md_inline(outcome_vs_expected(v)) + "\n\n";
  if (!v.description.empty()) o += md(v.description, lim.message) + "\n\n";
  if (v.role != "subject")  // a user's program was expected nothing
    o += "- expected **" + md_inline(v.expected) + "**: " + md(v.expected_why, lim.message) + "\n";
  o += "- observed **" + md_inline(outcome_shown(v)) + "**";
  o += " after " + format_seconds(v.duration_s);
  o += "\n";
  if (mismatched(v)) o += "- **" + md_inline(mismatch_meaning(v)) + "**\n";
  if (!v.message.empty()) o += "- message: " + md(v.message, lim.message) + "\n";
  if (!v.note.empty()) o += "- note: " + md(v.note, lim.message) + "\n";
  if (const auto failed = failed_workers(v); !failed.empty()) {
    o += "- workers that failed:\n";
    for (const auto& line : failed) o += "  - " + md(line, lim.message) + "\n";
  }
  if (v.hang)  // a step that stalled; "hung" only if it was ended so
    o += std::string(v.outcome == "hang" ? "- hung at " : "- stalled at ") +
         md(v.hang->step, lim.message) + " (pid " + std::to_string(v.hang->pid) + ")\n";
  if (const std::string tree = tree_facts(v.watchdog, v.outcome); !tree.empty())
    o += "- process tree: " + md_inline(tree) + "\n";
  if (v.protocol_error)
    o += "- protocol error: " + md(v.protocol_error->why, lim.message) + "\n\n" +
         md_code_block(cap_text(v.protocol_error->line, lim.message));
  o += "\n";
  if (lim.output > 0)
    for (const auto& [stream, text] :
         {std::pair<const char*, const std::string&>{"stdout", v.stdout_text},
          {"stderr", v.stderr_text}})
      if (!text.empty())
        o += stream + std::string(":\n\n") + md_code_block(cap_text(text, lim.output)) + "\n";
  if (lim.frames > 0 && !v.stacks.empty()) {
    std::string text;
    for (const Thread& t : v.stacks) {
      text += thread_line(t) + "\n";
      if (const std::string py = python_frames_text(t, lim.frames); !py.empty())
        text += "Python:\n" + py + "native:\n";
      size_t i = 0;
      for (const auto& f : t.frames) {
        if (i == lim.frames) {
          text += "  ...\n";
          break;
        }
        text += "  #" + std::to_string(i++) + " " + f + "\n";
      }
    }
    o += md_inline(stacks_title(v)) + ":\n\n";
    if (!v.stacks_python_note.empty()) o += md_inline(v.stacks_python_note) + "\n\n";
    o += md_code_block(text) + "\n";
  }
  if (tables && lim.details > 0) o += detail_tables_md(v, lim);
  if (const json details = details_without_views(v); lim.details > 0 && !details.empty())
    o += "<details><summary>details</summary>\n\n" +
         md_code_block(
             cap_text(details.dump(2, ' ', false, json::error_handler_t::replace), lim.details)) +
         "\n</details>\n\n";
  return o;
}

std::vector<std::string> case_details(const Report& report, const Limits& lim) {
  const bool subject = is_subject_report(report);  // exec, watch, matrix, attach: no catalog
  std::vector<std::string> parts = {subject ? "## How it ran\n\n" : "## Cases\n\n"};
  for (const Case& c : report.cases) {
    // <summary> is HTML, where Markdown escapes would show: escape it as HTML
    std::string o =
        "<details><summary>" +
        (subject ? "<b>" + html_escape(c.verdict) + "</b>"
                 : "<b>" + html_escape(or_else(c.id, "?")) + "</b>: " + html_escape(c.verdict)) +
        ": " + html_escape(c.title) + "</summary>\n\n";
    if (const Source& s = c.source;
        !subject && !(s.title.empty() && s.author.empty() && s.document.empty() && s.url.empty())) {
      o += "Source: \u201c" + md_inline(s.title) + "\u201d by " + md_inline(s.author);
      if (!s.document.empty()) o += " (document " + md_inline(s.document) + ")";
      if (s.url.rfind("https://", 0) == 0) o += " <" + s.url + ">";
      o += "\n\n";
    }
    if (!c.reported.empty()) o += "> " + md(c.reported, lim.message) + "\n\n";
    if (!c.mechanism.empty()) o += "Mechanism: " + md(c.mechanism, 2 * lim.message) + "\n\n";
    for (const Variant& v : c.variants)
      o += variant_details(v, lim, c.variants.size(), !c.featured);
    parts.push_back(o + "</details>\n\n");
  }
  return parts;
}

std::string environment_block(const Report& report) {
  std::string table = "## Environment\n\n| | |\n|---|---|\n", blocks;
  for (const auto& row : environment_rows(report.run.environment)) {
    if (row.block)
      blocks += "<details><summary>" + html_escape(row.label) + "</summary>\n\n" +
                md_code_block(cap_text(row.value, 8 * 1024)) + "\n</details>\n\n";
    else
      table += "| " + md_inline(row.label) + " | " + md(row.value, 2048) + " |\n";
  }
  return table + "\n" + blocks;
}

std::string render_at(const Report& report, const Limits& lim, size_t cap, size_t& omitted) {
  const std::string env = environment_block(report);
  bool charts = false;  // the tiny NN's loss curves, where a case drew them
  for (const Case& c : report.cases)
    for (const Variant& v : c.variants) charts = charts || !detail_charts(v).empty();
  const std::string footer = std::string("\n---\nRendered from report.json by forkcheck; ") +
                             "report.html has the full outputs" +
                             (charts ? " and the charts (loss curves)" : "") + ".\n";
  const size_t note_room = 256;
  const Finding f = key_finding(report);
  Budget b(cap, env.size() + footer.size() + note_room);
  b.add_reserved(key_finding_text(f));  // first, and always
  b.add(summary_header(report));
  b.add(watch_finding(report, f.headline));
  for (const auto& p : matrix_paragraphs(report)) b.add(p);
  for (const auto& p : verdicts(report, lim)) b.add(p);
  b.add(featured(report, lim));
  for (const auto& p : case_details(report, lim)) b.add(p);
  omitted = b.omitted();
  if (b.text().size() + env.size() + footer.size() + note_room <= cap) b.add_reserved(env);
  if (omitted)
    b.add_reserved("\n**" + std::to_string(omitted) +
                   " part(s) left out to stay under the size limit for this file: report.html and "
                   "report.json have everything.**\n");
  b.add_reserved(footer);
  return b.text();
}

class MarkdownReporter final : public Reporter {
 public:
  explicit MarkdownReporter(size_t max_bytes) : max_bytes_(max_bytes) {}
  std::string file_name() const override { return "summary.md"; }
  std::string render(const Report& report) const override {
    std::string text;
    for (const auto& lim : kLevels) {
      size_t omitted = 0;
      text = render_at(report, lim, max_bytes_, omitted);
      if (omitted == 0 && text.size() <= max_bytes_) return text;
    }
    if (text.size() > max_bytes_)
      text = cap_text(text, max_bytes_ / 2);  // a cap too small for the reserve
    return text;
  }

 private:
  size_t max_bytes_;
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter(size_t max_bytes) {
  return std::make_unique<MarkdownReporter>(max_bytes);
}

}  // namespace fc::reports
