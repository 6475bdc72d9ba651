#include "harness/commands/diff_command.h"

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/base/exit_status_codes.h"
#include "harness/base/json_shape.h"
#include "harness/base/usage_error.h"
#include "harness/console/console_style.h"
#include "harness/session/saved_run.h"
#include "reports/report_diff.h"
#include "reports/reporter.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

using reports::CaseChange;
using reports::Effect;

// One input read and checked: the file it resolved to, and the report it holds, read once.
struct Input {
  std::filesystem::path file;
  reports::Report model;
};

Input read_input(const std::filesystem::path& given, const std::string& label) {
  Input in;
  in.file = find_saved_run(given, label);
  const nlohmann::json report = load_saved_run(in.file, label);
  if (const std::string why = reports::unreadable_report(report); !why.empty())
    throw UsageError(label + " " + in.file.string() + ": " + why);
  in.model = reports::read_report(report);
  return in;
}

// Everything printed comes from the reports: escaped for the terminal, one line, shortened.
std::string safe(const std::string& s, size_t n = 120) {
  std::string line = s;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return reports::terminal_safe(reports::shorten(line, n));
}

void print_side(const char* label, const std::filesystem::path& file,
                const reports::ReportSide& s) {
  std::string about = "forkcheck " + (s.command.empty() ? std::string("run") : s.command);
  if (!s.started_at.empty()) about += ", started " + s.started_at;
  if (!s.forkcheck_version.empty()) about += ", forkcheck " + s.forkcheck_version;
  if (!s.complete) about += "; cut short: what did not run is skipped";
  std::printf("%s: %s (%s)\n", label, safe(file.string(), 200).c_str(), safe(about).c_str());
}

// The word a case is headed by (its worst change), painted, padded to 11 columns.
std::string effect_word(Effect e) {
  std::string plain = "coverage", painted = plain;
  switch (e) {
    case Effect::kRegression:
      painted = paint(Style::kBad, plain = "REGRESSION");
      break;
    case Effect::kChanged:
      painted = paint(Style::kWarn, plain = "changed");
      break;
    case Effect::kImprovement:
      painted = paint(Style::kGood, plain = "improved");
      break;
    case Effect::kCoverage:
      break;
  }
  return painted + std::string(11 - plain.size(), ' ');
}

// "spawn (fix): ok -> hang, expected ok: <why>", "verdict: reproduced -> regression".
std::string change_line(const CaseChange& c) {
  std::string what =
      c.variant.empty() ? "" : c.variant + (c.role.empty() ? "" : " (" + c.role + ")");
  if (c.kind == "verdict")
    return "verdict: " + c.a + " -> " + c.b + (c.why.empty() ? "" : ": " + c.why);
  if (c.kind == "summary") return "the run: " + c.a + " -> " + c.b + ": " + c.why;
  if (c.kind == "only-in-a") return (what.empty() ? "the case" : what) + ": only in A";
  if (c.kind == "only-in-b") return (what.empty() ? "the case" : what) + ": only in B";
  if (c.kind == "skip-reason") return what + ": skipped in both; A: " + c.a + "; B: " + c.b;
  std::string line = what + ": " + c.a + " -> " + c.b;
  if (c.expected_a == c.expected_b)
    line += ", expected " + c.expected_b;
  else if (!c.expected_a.empty() && !c.expected_b.empty())
    line += ", expected " + c.expected_a + " -> " + c.expected_b;
  if (!c.why.empty()) line += ": " + c.why;
  return line;
}

void print_console(const reports::ReportDiff& d, const Input& a, const Input& b) {
  print_side("A", a.file, d.a);
  print_side("B", b.file, d.b);
  std::printf("\n");
  if (d.changes.empty()) std::printf("no case or variant changed\n");
  // Grouped by case as diff_reports() ordered them: the first change of a case is its worst.
  std::string current = "\x01";
  for (const auto& c : d.changes) {
    if (c.case_id != current) {
      current = c.case_id;
      std::printf("%s %s\n", effect_word(c.effect).c_str(),
                  safe(c.case_id.empty() ? "(the run as a whole)" : c.case_id).c_str());
    }
    std::printf("    %s\n", safe(change_line(c), 160).c_str());
  }
  std::printf("\n");
  if (d.environment.empty()) {
    std::printf("environment: no difference in what the reports record\n");
  } else {
    std::printf("environment, the likely cause first (a link, not a proof):\n");
    bool unlinked_said = false;
    for (const auto& e : d.environment) {
      if (e.may_explain.empty() && !unlinked_said) {
        std::printf("  differs, linked to no changed case:\n");
        unlinked_said = true;
      }
      std::string line =
          e.name + ": " + reports::shorten(e.a, 60) + " -> " + reports::shorten(e.b, 60);
      std::printf("  %s\n", safe(line, 160).c_str());
      if (!e.may_explain.empty()) {
        std::string explains;
        for (const auto& m : e.may_explain) explains += (explains.empty() ? "" : ", ") + m;
        std::printf("      may explain: %s\n", safe(explains, 200).c_str());
      }
    }
  }
  std::printf("\n");
  // Counted by case, as each was headed above (by its worst change).
  size_t cases[4] = {0, 0, 0, 0};
  std::string regressed;
  current = "\x01";
  for (const auto& c : d.changes) {
    if (c.case_id == current) continue;
    current = c.case_id;
    ++cases[static_cast<int>(c.effect)];
    if (c.effect == Effect::kRegression)
      regressed += (regressed.empty() ? "" : ", ") + (c.case_id.empty() ? "the run" : c.case_id);
  }
  const std::string counts = std::to_string(cases[1]) + " changed, " + std::to_string(cases[2]) +
                             " improved, " + std::to_string(cases[3]) + " in coverage; " +
                             std::to_string(d.environment.size()) + " environment difference(s)";
  if (d.regressed)
    std::printf("%s in %zu case(s): %s; %s (exit status 1)\n",
                paint(Style::kBad, "B regressed against A").c_str(), cases[0],
                safe(regressed, 200).c_str(), counts.c_str());
  else
    std::printf("B did not regress against A: cases %s\n", counts.c_str());
}

int compare(const DiffOptions& options) {
  if (options.json && options.markdown == "-")
    throw UsageError("diff: --json and --markdown - both print on stdout: give --markdown a FILE");
  const Input a = read_input(options.a, "diff A");
  const Input b = read_input(options.b, "diff B");
  if (const std::string why = reports::incomparable_reports(a.model, b.model); !why.empty())
    throw UsageError("diff: " + why);
  const reports::ReportDiff d = reports::diff_reports(a.model, b.model);
  const int status = d.regressed ? exit_status::kFinding : exit_status::kOk;

  const std::string a_path = a.file.string(), b_path = b.file.string();
  if (!options.markdown.empty()) {
    const std::string md = reports::diff_markdown(d, a_path, b_path);
    if (options.markdown == "-") {
      std::fwrite(md.data(), 1, md.size(), stdout);
      return status;
    }
    try {
      reports::write_file_atomically(options.markdown, md);
    } catch (const std::exception& e) {
      throw UsageError("diff: --markdown " + options.markdown.string() + ": " + e.what());
    }
  }
  if (options.json) {
    std::cout << reports::diff_to_json(d, a_path, b_path)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return status;
  }
  if (d.identical()) {
    std::printf(
        "no differences: %s and %s have the same cases, outcomes, verdicts and environment\n",
        safe(a_path, 200).c_str(), safe(b_path, 200).c_str());
    return status;
  }
  print_console(d, a, b);
  if (!options.markdown.empty())
    std::printf("wrote %s (for a ticket)\n", safe(options.markdown.string(), 200).c_str());
  return status;
}

}  // namespace

int diff_command(const DiffOptions& options) {
  try {
    return compare(options);
  } catch (const nlohmann::json::exception& e) {
    // A saved report that passed the checks on load (saved_run.h) and still holds a field of
    // another type than forkcheck writes, deeper than they look: one line, a usage error (the
    // files are the user's input).
    throw UsageError("diff: A or B is not a report forkcheck can read: " + json_error_text(e));
  }
}

}  // namespace fc::harness
