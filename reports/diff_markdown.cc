// diff_markdown(): `forkcheck diff --markdown FILE`, a form to paste into a ticket. Small by
// construction: every cell is one shortened line, and rows stop before max_bytes, saying how many
// more `forkcheck diff --json` has.
#include <string>
#include <vector>

#include "reports/report_diff.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

// A table cell: one line, escaped, at most 160 bytes of the original.
std::string cell(const std::string& s) { return md_inline(shorten(s, 160)); }

std::string side_line(const char* label, const std::string& path, const ReportSide& s) {
  std::string line = std::string("- **") + label + "**: " + cell(path) + " (forkcheck " +
                     cell(s.command.empty() ? "run" : s.command);
  if (!s.started_at.empty()) line += ", started " + cell(s.started_at);
  if (!s.forkcheck_version.empty()) line += ", forkcheck " + cell(s.forkcheck_version);
  line += s.complete ? ")" : "; the run was cut short: its variants not run are skipped)";
  return line + "\n";
}

std::string expected_cell(const CaseChange& c) {
  if (c.expected_a.empty() && c.expected_b.empty()) return "";
  if (c.expected_a == c.expected_b || c.expected_b.empty()) return cell(c.expected_a);
  if (c.expected_a.empty()) return cell(c.expected_b);
  return cell(c.expected_a) + " → " + cell(c.expected_b);
}

std::string what_cell(const CaseChange& c) {
  if (c.kind == "summary") return "the run (summary.ok)";
  std::string w = cell(c.variant.empty() ? c.case_id : c.case_id + "/" + c.variant);
  if (!c.role.empty()) w += " (" + cell(c.role) + ")";
  if (c.kind == "verdict") w += " verdict";
  if (c.kind == "skip-reason") w += " skip reason";
  return w;
}

}  // namespace

std::string diff_markdown(const ReportDiff& d, const std::string& a_path, const std::string& b_path,
                          size_t max_bytes) {
  std::string out = "## forkcheck diff: ";
  if (d.identical())
    out += "no differences\n\n";
  else if (d.regressed)
    out += "B regressed against A\n\n";
  else
    out += "B did not regress against A\n\n";
  out += side_line("A", a_path, d.a) + side_line("B", b_path, d.b) + "\n";
  if (d.identical()) return out;

  // Rows until the budget is spent, keeping room for the closing lines.
  const size_t budget = max_bytes > 600 ? max_bytes - 600 : 0;
  size_t left_out = 0;
  auto add_row = [&](const std::string& row) {
    if (out.size() + row.size() > budget) {
      ++left_out;
      return;
    }
    out += row;
  };
  if (d.changes.empty()) {
    out += "No case or variant changed.\n\n";
  } else {
    out +=
        "### What changed\n\n| | case / variant | A | B | expected | why (B) "
        "|\n|---|---|---|---|---|---|\n";
    for (const auto& c : d.changes) {
      const std::string a = c.kind == "only-in-b" ? "(absent)" : c.a;
      const std::string b = c.kind == "only-in-a" ? "(absent)" : c.b;
      const bool bad = c.effect == Effect::kRegression;
      add_row(std::string("| ") + (bad ? "**regression**" : effect_name(c.effect)) + " | " +
              what_cell(c) + " | " + cell(a) + " | " + cell(b) + " | " + expected_cell(c) + " | " +
              cell(c.why) + " |\n");
    }
    out += "\n";
  }
  if (d.environment.empty()) {
    out += "No difference in the environment the reports record.\n";
  } else {
    out +=
        "### Environment, the likely cause first\n\n| fact | A | B | may explain "
        "|\n|---|---|---|---|\n";
    for (const auto& e : d.environment) {
      std::string explains;
      for (const auto& m : e.may_explain) explains += (explains.empty() ? "" : ", ") + m;
      add_row("| " + cell(e.name) + " | " + cell(e.a) + " | " + cell(e.b) + " | " +
              (explains.empty() ? "(no changed case)" : cell(explains)) + " |\n");
    }
    out +=
        "\nA difference *may explain* the changes of the cases whose hazard depends on it "
        "(docs/cases.md); none is shown to be their cause.\n";
  }
  if (left_out > 0)
    out += "\n" + std::to_string(left_out) +
           " more rows left out to stay small: `forkcheck diff --json` has them all.\n";
  return out;
}

}  // namespace fc::reports
