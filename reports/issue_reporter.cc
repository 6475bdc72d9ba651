// issue.md: the run made to paste into a bug ticket, under 10 KB (kIssueMaxBytes): the key
// finding and its fix (reports/finding.h), the exact command line, where a stuck program waits
// (its Python frames and the first native ones, one thread per place), the cases that were not
// as documented, and the environment lines a ticket asks for with the risks they show. The full
// reports are named at the end, to attach.
#include <string>
#include <vector>

#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/subject_text.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"
#include "reports/watch_view.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

constexpr size_t kWhereBytes = 3000;      // the stuck stacks, trimmed
constexpr size_t kValueBytes = 160;       // one environment value
constexpr size_t kTracebackBytes = 4000;  // the exception, the user's frames whole

std::string command_line(const Report& report) {
  std::string s;
  for (const std::string& arg : report.run.argv) {
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t'\"$`\\|&;<>()*?") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? arg : "'" + arg + "'");
  }
  return s;
}

// The stacks of a stuck subject, one thread per place it waits: Python frames, then native ones.
std::string stuck_stacks(const Variant& v) {
  const std::vector<Thread>* stacks = &v.stacks;
  std::string title = stacks_title(v);
  if (stacks->empty() && v.stall) {
    stacks = &v.stall->stacks;
    title = "stacks taken when the whole tree stalled at " + format_seconds(v.stall->after_s);
  }
  if (stacks->empty()) return "";
  std::string text;
  std::vector<std::string> seen;
  for (const Thread& t : *stacks) {
    std::string place = python_where(t);
    if (place.empty()) place = t.frames.empty() ? "" : t.frames[0];
    if (place.empty()) continue;
    bool dup = false;
    for (const auto& s : seen) dup = dup || s == place;
    if (dup) continue;
    seen.push_back(place);
    text += thread_line(t) + "\n" + python_frames_text(t, 6);
    size_t i = 0;
    for (const auto& f : t.frames) {
      if (i == 8) {
        text += "  ...\n";
        break;
      }
      text += "  #" + std::to_string(i++) + " " + f + "\n";
    }
  }
  return "### " + md_inline(title) + "\n\n" + md_code_block(cap_text(text, kWhereBytes)) + "\n";
}

std::string environment_section(const Environment& facts) {
  std::string o = "### Environment\n\n";
  auto add_rows = [&o](const std::vector<EnvRow>& rows) {
    for (const auto& r : rows) {
      if (r.block) continue;
      o += "- " + md_inline(r.label) + ": " + md_inline(cap_text(r.value, kValueBytes)) + "\n";
    }
  };
  // Each fact once: what forkcheck measured of the machine (CPUs with their affinity and quota,
  // every variable seen) stands in for the repro program's line of the same name.
  const std::vector<EnvRow> machine = machine_rows(facts);
  std::vector<EnvRow> rows;
  for (auto& r : environment_rows(facts)) {
    bool measured = false;
    for (const auto& m : machine) measured = measured || m.label == r.label;
    if (!measured) rows.push_back(std::move(r));
  }
  add_rows(rows);
  add_rows(python_rows(facts));
  add_rows(machine);
  if (!facts.risks.empty()) {
    o += "\n**Risks in this environment:**\n\n";
    for (const auto& r : facts.risks)
      o += "- " + md_inline(r.note) + ": " + md_inline(cap_text(risk_why(r), 280)) + "\n";
  }
  return o + "\n";
}

// watch: each hazardous fork in a line, the first ones with where it forked, the threads that
// ran, and the fix (what the terminal said), so that the ticket holds them; "" when none.
std::string hazardous_forks_text(const Variant& v) {
  constexpr size_t kWithAdvice = 3, kListed = 10;
  const auto forks = hazardous_forks(v);
  if (forks.empty()) return "";
  std::string o = "### Hazardous forks\n\n";
  for (size_t i = 0; i < forks.size() && i < kListed; ++i) {
    o += "- " + md_inline(fork_failure_message(*forks[i])) + "\n";
    if (i < kWithAdvice) o += "\n" + md_code_block(fork_advice_text(*forks[i])) + "\n";
  }
  if (forks.size() > kListed)
    o += "- and " + std::to_string(forks.size() - kListed) + " more in report.json\n";
  if (const size_t more = unlisted_failing(v); more > 0)
    o += "- and " + std::to_string(more) + " more that fail, not listed in report.json\n";
  return o + "\n";
}

class IssueReporter : public Reporter {
 public:
  std::string file_name() const override { return "issue.md"; }
  std::string render(const Report& report) const override {
    const Finding f = key_finding(report);
    const Run& run = report.run;
    std::string head = "## forkcheck: " + md_inline(f.headline) + "\n\n";
    for (const auto& fact : f.facts) head += "- " + md_inline(cap_text(fact, 400)) + "\n";
    if (!f.facts.empty()) head += "\n";
    if (!f.fix.empty()) head += "**Fix:** " + md_inline(f.fix) + "\n\n";
    if (const std::string cmd = command_line(report); !cmd.empty())
      head += "Command:\n\n" + md_code_block(cap_text(cmd, 1500)) + "\n";
    head += "forkcheck " + md_inline(report.tool.version) + ", " + md_inline(run.started_at) +
            ", " + md_inline(format_seconds(run.duration_s.value_or(0.0))) + "\n\n";

    std::string body;
    const auto& cases = report.cases;
    if (cases.size() == 1 && cases[0].variants.size() == 1 &&
        cases[0].variants[0].role == "subject") {
      const Variant& v = cases[0].variants[0];
      body += stuck_stacks(v);
      body += hazardous_forks_text(v);
      // The exception that ended it, its user's frames whole; the processes of it that failed.
      if (v.outcome == "error")
        if (const auto e = program_error(v))
          body +=
              "### The exception\n\n" + md_code_block(traceback_text(*e, kTracebackBytes)) + "\n";
      if (const auto failed = failed_descendants(v); !failed.empty()) {
        body += "### Processes of it that failed\n\n";
        for (const auto& d : failed)
          body += "- pid " + std::to_string(d.pid) +
                  (d.what.empty() ? "" : " " + md_inline(d.what)) + ": " + md_inline(d.how) +
                  (d.where.empty() ? "" : " at " + md_inline(d.where)) +
                  (d.where_from.empty() ? "" : " (" + md_inline(d.where_from) + ")") +
                  (d.test.empty() ? "" : " during " + md_inline(d.test)) + "\n" +
                  (d.memory.empty() ? "" : "  - memory: " + md_inline(d.memory) + "\n");
        body += "\n";
      }
      // The ends it dealt with (or that cannot be counted), said so that none is lost.
      if (const auto other = uncounted_descendants(v); !other.empty()) {
        constexpr size_t kShown = 5;
        body += "### Ends not counted as failures\n\n" + std::to_string(other.size()) + " end" +
                (other.size() == 1 ? "" : "s") +
                " of its processes did not fail the run (report.json: `process_ends`):\n\n";
        for (size_t i = 0; i < other.size() && i < kShown; ++i)
          body += "- pid " + std::to_string(other[i].pid) +
                  (other[i].what.empty() ? "" : " " + md_inline(other[i].what)) + ": " +
                  md_inline(other[i].how) + ": " + md_inline(other[i].not_counted) + "\n";
        if (other.size() > kShown)
          body += "- and " + std::to_string(other.size() - kShown) + " more\n";
        body += "\n";
      }
      const std::string& err = v.stderr_text;
      if (!err.empty() && v.outcome != "ok")
        body += "### The end of its stderr\n\n" +
                md_code_block(err.size() > 1500 ? "..." + err.substr(err.size() - 1500) : err) +
                "\n";
    } else if (!cases.empty()) {
      const bool subject = is_subject_report(report);  // matrix: the program per start method
      body += subject ? "### The program under each start method\n\n| command | verdict | how it "
                        "ended |\n|---|---|---|\n"
                      : "### Cases\n\n| case | verdict | outcomes (expected) |\n|---|---|---|\n";
      for (const Case& c : cases) {
        std::string outcomes;
        for (const Variant& v : c.variants)
          outcomes +=
              (outcomes.empty() ? ""
               : subject        ? "; "
                                : ", ") +
              v.name + (subject ? ": " : " ") +
              // A program (matrix) that exited 0 while its workers failed: not ok.
              (exited_zero_but_processes_failed(v) ? "exited 0, but " + descendants_failure_count(v)
                                                   : outcome_shown(v)) +
              (!subject && mismatched(v) ? " (" + v.expected + ")" : "");
        body += "| " + md_inline((subject ? "forkcheck " : "") + c.id) + " | " +
                md_inline(c.verdict) + " | " + md_inline(cap_text(outcomes, 300)) + " |\n";
      }
      body += "\n";
    }
    const std::string env = environment_section(run.environment);
    const std::string foot =
        "<sub>Full reports beside this file: report.html, report.json, junit.xml, summary.md. "
        "Attach report.json for everything forkcheck saw.</sub>\n";
    // Under the cap, the finding and the footer always; then the environment, then the body,
    // each cut rather than dropped.
    std::string out = head;
    const size_t room = kIssueMaxBytes - std::min(kIssueMaxBytes, head.size() + foot.size() + 64);
    const size_t env_room = std::min(env.size(), room / 2);
    const size_t body_room = room - env_room;
    // cap_text adds its marker (under 100 bytes) to what it keeps: room is left for it.
    constexpr size_t kMarker = 100;
    out += body.size() <= body_room
               ? body
               : cap_text(body, body_room > kMarker ? body_room - kMarker : 0) + "\n\n";
    out += env.size() <= env_room
               ? env
               : cap_text(env, env_room > kMarker ? env_room - kMarker : 0) + "\n\n";
    out += foot;
    return out.size() <= kIssueMaxBytes ? out : cap_text(out, kIssueMaxBytes - kMarker);
  }
};

}  // namespace

std::unique_ptr<Reporter> make_issue_reporter() { return std::make_unique<IssueReporter>(); }

}  // namespace fc::reports
