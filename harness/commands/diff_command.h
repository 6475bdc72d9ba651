// `forkcheck diff A B [--json] [--markdown FILE]`: what changed from one saved run to another
// (cases and variants whose outcome or verdict changed, coverage, the environment differences
// that may explain them, the likely cause first): "why does it hang on the cluster and not on my
// laptop?". The comparison is reports/report_diff.h's; this reads the inputs and prints.
#pragma once

#include <filesystem>
#include <string>

namespace fc::harness {

struct DiffOptions {
  // Each: a report.json, a run log (run.jsonl), a run folder, or forkcheck-report/ (its latest).
  std::filesystem::path a, b;
  bool json = false;               // the comparison as JSON on stdout, nothing else
  std::filesystem::path markdown;  // written there for a ticket; "-": on stdout instead
};

// exit_status::kFinding when B regressed against A (reports/report_diff.h says exactly when),
// else kOk, improvements and mere differences included. Throws UsageError for an input that is
// missing, not a forkcheck report, of a schema major version other than 1, or of another kind
// than the other (the catalog's cases against a program's run), and for an unwritable --markdown.
int diff_command(const DiffOptions& options);

}  // namespace fc::harness
