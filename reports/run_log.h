// The run log (run.jsonl): one JSON object per line, appended as the run goes, flushed after each
// line, so that a forkcheck killed mid-run leaves a log that can still be rendered.
//   {"type":"run", ...}                 the run's header: tool, argv, options, start time
//   {"type":"case", ...}                a planned case with its variants' expectations
//   {"type":"variant","case":ID, ...}   one variant's result, as it ended
//   {"type":"end", ...}                 written last; absent when the run was cut short
// A report is a pure function of these lines: fold_run_log() builds report.json's content.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::reports {

inline constexpr const char* kSchemaVersion = "1.0";
inline constexpr const char* kRunLogFileName = "run.jsonl";  // in the run's output folder

class RunLog {
 public:
  // Creates the log afresh: whatever is at `path` is removed first (a symlink itself, never what
  // it points to), then the file is created exclusively, so that nothing is written through a
  // link placed there meanwhile. Throws std::runtime_error naming the path when it cannot.
  explicit RunLog(const std::filesystem::path& path);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  void append(const nlohmann::json& line);
  const std::filesystem::path& path() const { return path_; }
  // The lines this log appended, as a reader of the file gets them back (text that is not UTF-8
  // replaced as it was written): the run's own records, whatever else the file may have got.
  const std::vector<nlohmann::json>& lines() const { return lines_; }

 private:
  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  std::vector<nlohmann::json> lines_;
};

// Reads a run log; a torn last line (the writer was killed mid-write) is skipped.
std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path);

// Builds the report (report.json's content) from the run log's lines.
nlohmann::json fold_run_log(const std::vector<nlohmann::json>& lines);

}  // namespace fc::reports
