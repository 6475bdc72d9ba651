// Every format, and writing them all; write_file_atomically() is per OS (file_io_posix.cc,
// file_io_win32.cc).
#include "reports/reporter.h"

namespace fc::reports {

std::vector<std::unique_ptr<Reporter>> all_reporters() {
  std::vector<std::unique_ptr<Reporter>> r;
  r.push_back(make_json_reporter());
  r.push_back(make_html_reporter());
  r.push_back(make_junit_reporter());
  r.push_back(make_markdown_reporter());
  return r;
}

std::vector<std::filesystem::path> write_reports(const nlohmann::json& report,
                                                 const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> written;
  for (const auto& r : all_reporters()) {
    auto path = dir / r->file_name();
    write_file_atomically(path, r->render(report));
    written.push_back(path);
  }
  return written;
}

}  // namespace fc::reports
