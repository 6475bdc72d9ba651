// One reporter interface: each format renders the report (report.json's content, built from the
// run log alone) into one file. Adding a format is adding one file under reports/.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::reports {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string file_name() const = 0;
  virtual std::string render(const nlohmann::json& report) const = 0;
};

std::unique_ptr<Reporter> make_json_reporter();

// Every format forkcheck writes.
std::vector<std::unique_ptr<Reporter>> all_reporters();

// Writes `text` to `path` atomically (a temp file beside it, fsync, rename): a reader sees the
// old file or the new one, never half of one. Throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Renders every format into `dir`; returns the paths written.
std::vector<std::filesystem::path> write_reports(const nlohmann::json& report,
                                                 const std::filesystem::path& dir);

}  // namespace fc::reports
