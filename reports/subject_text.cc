#include "reports/subject_text.h"

#include <cstdio>

#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/watch_view.h"

namespace fc::reports {

bool is_subject_report(const Report& report) {
  bool any = false;
  for (const Case& c : report.cases)
    for (const Variant& v : c.variants) {
      if (v.role != "subject") return false;
      any = true;
    }
  return any;
}

SubjectLine subject_line(const Variant& v, std::size_t done, std::size_t total,
                         const std::string& hazards) {
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", v.duration_s);
  const std::string outcome = outcome_shown(v);
  SubjectLine line;
  const bool ok = outcome == "ok" && hazards.empty();
  // matrix: one line per start method; else the one program.
  if (total > 1) {
    char count[32];
    std::snprintf(count, sizeof count, "[%zu/%zu]", done, total);
    line.text =
        std::string(count) + " under " + (v.start_method.empty() ? "?" : v.start_method) + ": ";
  } else {
    line.text = ok ? "the program " : "the program: ";
  }
  // Ended itself, while processes of it failed: the run did not do its work.
  const bool exited_zero = exited_zero_but_processes_failed(v);
  line.text +=
      outcome == "ok" || exited_zero ? std::string("ended in ") + took : outcome + " after " + took;
  const std::string descendants = exited_zero ? descendants_failure_count(v) : "";
  if (!descendants.empty()) line.text += ", but " + descendants;
  // Ends of its processes the program meant or saw (a test that kills its child on purpose):
  // not failures, and said so, in a number (issue.md says why, each).
  std::size_t uncounted = 0;
  for (const auto& end : uncounted_descendants(v))
    if (!end.after_look) ++uncounted;
  if (uncounted > 0)
    line.text += " (" + std::to_string(uncounted) + " end" + (uncounted == 1 ? "" : "s") +
                 " of its processes not counted as failures: issue.md says why)";
  line.verdict = !hazards.empty()                         ? "FAILED: HAZARDOUS FORKS"
                 : unfinished(v)                          ? outcome
                 : outcome == "ok" && descendants.empty() ? "ok"
                                                          : "FAILED";
  return line;
}

std::vector<SubjectSummaryItem> subject_summary(const Report& report) {
  std::vector<SubjectSummaryItem> items;
  bool hazards = false;
  for (const Case& c : report.cases) {
    const auto& variants = c.variants;
    for (const Variant& v : variants) {
      const std::string outcome = outcome_shown(v), message = one_line(v.message);
      const bool failing = !watch_failure(v).empty();
      hazards = hazards || failing;
      const std::string who = variants.size() > 1
                                  ? "under " + (v.start_method.empty() ? "?" : v.start_method)
                                  : std::string("the program");
      // Exited 0 while processes of it failed: said so, their count (the finding names each).
      if (exited_zero_but_processes_failed(v)) {
        items.push_back({who + ": exited 0, but " + descendants_failure_count(v), true});
        continue;
      }
      items.push_back(
          {who + ": " + outcome + (message.empty() ? "" : " (" + shorten(message, 120) + ")"),
           outcome != "ok" || failing});
    }
  }
  const bool ok = report.summary.ok.value_or(true);
  // Interrupted: neither ended well nor failed, so not said to have done either.
  bool unfinished_any = false;
  for (const Case& c : report.cases)
    for (const Variant& v : c.variants) unfinished_any = unfinished_any || unfinished(v);
  items.push_back({hazards          ? "hazardous forks found"
                   : unfinished_any ? "it did not run to its end"
                   : ok             ? "it ended well"
                                    : "it did not end well",
                   hazards || !ok});
  return items;
}

}  // namespace fc::reports
