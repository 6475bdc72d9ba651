// What the terminal says, as it happens, of a user's program under exec, watch, matrix and attach:
// of the program and how it ended, never in the catalog's words (no case or variant counts, no
// "expected", no "as expected"): the finding that follows says what it means.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reports/model/report_model.h"

namespace fc::reports {

// Whether every variant of a report (or of a case) is a user's program's (role "subject").
bool is_subject_report(const Report& report);

// One line for a run of the user's program as it ends, and the word to colour (its verdict):
// "the program ended in 0.1 s" (exec, watch, attach), "[2/3] under spawn: crash after 2.3 s"
// (matrix, one line per start method); its verdict "ok", or "FAILED" where it did not end well or
// where `hazards` (watch's hazardous forks) is not empty.
struct SubjectLine {
  std::string text;     // without the verdict word
  std::string verdict;  // "ok", "FAILED", "FAILED: HAZARDOUS FORKS", "not finished"...
};
SubjectLine subject_line(const Variant& variant, std::size_t done, std::size_t total,
                         const std::string& hazards);

// The summary a report of a user's program opens with, in place of the catalog's counts: one
// item per run of it ("the program: error (exit status 1)"; under matrix "under spawn: crash
// (killed by SIGSEGV)"), and the run's word ("it ended well", "it did not end well", "hazardous
// forks found"). `bad` marks what did not end well.
struct SubjectSummaryItem {
  std::string text;
  bool bad = false;
};
std::vector<SubjectSummaryItem> subject_summary(const Report& report);

}  // namespace fc::reports
