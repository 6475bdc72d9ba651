// One reporter interface: each format renders the report (its model, read once from report.json's
// content, which is built from the run log alone) into one file. Adding a format is adding one
// file under reports/.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

namespace fc::reports {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string file_name() const = 0;
  virtual std::string render(const Report& report) const = 0;
};

std::unique_ptr<Reporter> make_json_reporter();   // report.json
std::unique_ptr<Reporter> make_html_reporter();   // report.html
std::unique_ptr<Reporter> make_junit_reporter();  // junit.xml
// summary.md, at most `max_bytes`: a GitHub comment takes at most 65,536 characters (and a step
// summary 1 MiB), and a character is at least a byte.
inline constexpr size_t kMarkdownMaxBytes = 65536;
std::unique_ptr<Reporter> make_markdown_reporter(size_t max_bytes = kMarkdownMaxBytes);

// issue.md: made to paste into a bug ticket, at most kIssueMaxBytes (issue_reporter.cc).
inline constexpr size_t kIssueMaxBytes = 10 * 1000;
std::unique_ptr<Reporter> make_issue_reporter();

// Every format forkcheck writes.
std::vector<std::unique_ptr<Reporter>> all_reporters();

// Writes `text` to `path` atomically (a temp file beside it, fsync, rename): a reader sees the
// old file or the new one, never half of one. Throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Removes from `dir` exactly the files a run writes there: the run log, every format's file, and
// their temporaries (NAME.tmp.*) that a run cut short left behind, so that nobody reads an older
// run's verdict beside a newer run's log. A symlink of those names is removed itself, never
// followed; a directory of those names and every other file are left alone. Throws
// std::runtime_error naming a file it could not remove.
void remove_run_files(const std::filesystem::path& dir);

// Renders every format into `dir` from `report` (read_report() of report.json's content); returns
// the paths written.
std::vector<std::filesystem::path> write_reports(const Report& report,
                                                 const std::filesystem::path& dir);

}  // namespace fc::reports
