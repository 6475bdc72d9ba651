#include "reports/verdict.h"

#include "reports/python_view.h"

#include "reports/report_view.h"
#include "reports/start_method_reasons.h"
#include "reports/text.h"
#include "reports/watch_view.h"

namespace fc::reports {
namespace {

// "fork expected hang, observed timeout (the deadline passed while the process tree was not
// blocked)": a timeout or a protocol error says what it was, so that no reader takes it for the
// hang or the error the variant expected.
std::string describe(const Variant& v) {
  const std::string outcome = or_else(v.outcome, "?");
  const std::string meaning = outcome_meaning(outcome);
  return or_else(v.name, "?") + " expected " + or_else(v.expected, "?") + ", observed " + outcome +
         (meaning.empty() ? "" : " (" + meaning + ")");
}

}  // namespace

Verdict case_verdict(const std::vector<Variant>& variants,
                     const std::vector<NotSelected>& not_selected) {
  std::string regressions, misses, skips;
  // Hazards the run did not see to their end (forkcheck was interrupted): they might have failed.
  std::string hazards_unfinished;
  // What happened, for a sentence that claims nothing else: hazards that failed as documented,
  // hazards that were ok as their expectation said, fixes that were ok.
  std::string failed_as_documented, ok_as_expected, fixes_ok;
  bool all_skipped = true, hazard_failed = false, any_hazard = false;
  auto add = [](std::string& list, const std::string& item) {
    list += (list.empty() ? "" : "; ") + item;
  };
  // `forkcheck exec` and `watch`: the user's own program is the subject, and its verdict is how
  // it ended; under `watch`, a hazardous fork not allowed fails a program that ended ok.
  // `forkcheck matrix`: the program once per start method; ok only when ok under each.
  bool all_subjects = variants.size() > 1;
  for (const auto& v : variants) all_subjects = all_subjects && v.role == "subject";
  if (all_subjects) {
    std::string ok_under, failed_under, not_finished;
    for (const auto& v : variants) {
      const std::string name = or_else(v.name, "?");
      if (unfinished(v))
        add(not_finished, name);
      else if (subject_ok(v))
        add(ok_under, name);
      else
        add(failed_under,
            name + ": " +
                (exited_zero_but_processes_failed(v) ? "exited 0, but " + descendants_failure(v)
                                                     : v.outcome + ": " + v.message));
    }
    if (!failed_under.empty())
      return {"failed",
              "not ok under " + failed_under + (ok_under.empty() ? "" : "; ok under " + ok_under)};
    if (!not_finished.empty())
      return {"partial", "ok under " + (ok_under.empty() ? "none" : ok_under) +
                             "; not run to its end (forkcheck was interrupted): " + not_finished};
    return {"ok", "ok under every start method run: " + ok_under};
  }
  if (variants.size() == 1 && variants[0].role == "subject") {
    const auto& v = variants[0];
    // Stopped by forkcheck's interruption: not a failure of the program's (its message says when).
    if (unfinished(v)) return {"skipped", v.message};
    const std::string hazards = watch_failure(v);
    // A worker that crashed or raised, while the program exited 0, fails it too: its work was
    // not done, whatever the program's own exit says.
    const std::string descendants = descendants_failure(v);
    const std::string looked = deaths_after_look_text(v);
    std::string also = looked.empty() ? "" : "; " + looked;
    // The other ends it did not count, in a number (issue.md and process_ends list them).
    size_t uncounted = 0;
    for (const auto& d : uncounted_descendants(v))
      if (!d.after_look) ++uncounted;
    if (uncounted > 0)
      also += "; " + std::to_string(uncounted) + " end" + (uncounted == 1 ? "" : "s") +
              " of its processes not counted as failures (each with why: issue.md, "
              "report.json's process_ends)";
    if (v.outcome == "ok" || exited_zero_but_processes_failed(v)) {
      if (hazards.empty() && descendants.empty()) return {"ok", v.message + also};
      if (hazards.empty())
        return {"failed", "the program exited 0, but " + descendants + " (exit status 1)" + also};
      return {"failed", (descendants.empty() ? "the program ended ok, but made " + hazards
                                             : "the program exited 0, but " + descendants +
                                                   "; and it made " + hazards) +
                            " (forkcheck watch fails: exit status 1)" + also};
    }
    return {"failed", v.outcome + ": " + v.message +
                          (hazards.empty() ? "" : "; it also made " + hazards) +
                          (descendants.empty() ? "" : "; " + descendants) + also};
  }
  for (const auto& v : variants) {
    const std::string outcome = v.outcome;
    const std::string expected = v.expected;
    // Exact words: a timeout is not a hang (the tree was still working when it was stopped), so a
    // hazard expected to hang that timed out did not reproduce, and a fix that timed out or broke
    // its channel (protocol-error) is a regression like any other outcome but ok.
    const bool matched = outcome == expected;
    // A skip is never a failure of the fix nor a sign of the hazard: it says why it did not run.
    if (outcome == "skip") {
      add(skips, or_else(v.name, "?") + ": " + v.message);
      if (unfinished(v) && v.role != "fix") add(hazards_unfinished, or_else(v.name, "?"));
      continue;
    }
    all_skipped = false;
    if (v.role == "fix") {
      if (!matched)
        add(regressions, describe(v));
      else
        add(fixes_ok, or_else(v.name, "?"));
    } else {
      any_hazard = true;
      if (!matched) {
        add(misses, describe(v));
      } else if (outcome != "ok") {
        hazard_failed = true;
        add(failed_as_documented, or_else(v.name, "?") + " " + outcome);
      } else {
        add(ok_as_expected, or_else(v.name, "?"));
      }
    }
  }
  std::string left_out, hazards_left_out, fixes_left_out;
  for (const auto& n : not_selected) {
    add(left_out, or_else(n.name, "?"));
    add(n.role == "fix" ? fixes_left_out : hazards_left_out, or_else(n.name, "?"));
  }
  // Said of every verdict of a partial run: what the run did not look at.
  const std::string partial =
      left_out.empty()
          ? ""
          : "; partial run: not selected: " + left_out +
                (fixes_left_out.empty() ? "" : " (fixes not run: " + fixes_left_out + ")");
  if (all_skipped && left_out.empty()) return {"skipped", skips.empty() ? "no variant ran" : skips};
  if (!regressions.empty())
    return {"regression", "a fixed variant misbehaved: " + regressions + partial};
  if (!misses.empty())
    return {"not-reproduced", "the hazard did not show as documented: " + misses + partial};
  // Hazards left out might have failed: without one that did, the run cannot say either way.
  if (!hazard_failed && (!hazards_left_out.empty() || !hazards_unfinished.empty())) {
    std::string not_reached = hazards_left_out;
    if (!hazards_unfinished.empty()) add(not_reached, hazards_unfinished);
    std::string reason =
        any_hazard ? "no hazard variant that ran failed (ok here, as expected: " + ok_as_expected +
                         "), and " + not_reached + " did not run"
        : hazards_unfinished.empty() ? "no hazard variant was selected (" + hazards_left_out + ")"
                                     : "no hazard variant ran to its end (" + not_reached + ")";
    if (!hazards_unfinished.empty()) reason += " (forkcheck was interrupted)";
    if (!fixes_ok.empty()) reason += "; fixes ok: " + fixes_ok;
    if (!skips.empty()) reason += "; not run: " + skips;
    return {"partial", reason + partial};
  }
  if (all_skipped) return {"skipped", (skips.empty() ? "no variant ran" : skips) + partial};
  if (!any_hazard || !hazard_failed) {
    std::string reason = "no hazard variant fails on this platform (each says why)";
    if (!ok_as_expected.empty()) reason += ": ok here, as expected: " + ok_as_expected;
    if (!fixes_ok.empty()) reason += "; fixes ok: " + fixes_ok;
    return {"not-reproduced", reason + partial};
  }
  std::string reason = "failed as documented: " + failed_as_documented;
  if (!ok_as_expected.empty()) reason += "; ok here, as expected: " + ok_as_expected;
  if (!fixes_ok.empty()) reason += "; fixes ok: " + fixes_ok;
  if (!skips.empty()) reason += "; not run: " + skips;
  return {"reproduced", reason + partial};
}

}  // namespace fc::reports
