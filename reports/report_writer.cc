// Every format, and writing them all; write_file_atomically() is per OS (file_io_posix.cc,
// file_io_win32.cc).
#include <stdexcept>
#include <system_error>

#include "reports/reporter.h"
#include "reports/run_log.h"

namespace fc::reports {
namespace {

namespace fs = std::filesystem;

// A file or a symlink (symlink_status: the link, not what it points to) is removed; a directory,
// or what cannot be looked at, is not ours to remove.
void remove_if_file(const fs::path& p) {
  std::error_code ec;
  const fs::file_type type = fs::symlink_status(p, ec).type();
  if (ec || (type != fs::file_type::regular && type != fs::file_type::symlink)) return;
  if (!fs::remove(p, ec) && ec)
    throw std::runtime_error("cannot remove " + p.u8string() +
                             " (an earlier run's): " + ec.message());
}

}  // namespace

std::vector<std::unique_ptr<Reporter>> all_reporters() {
  std::vector<std::unique_ptr<Reporter>> r;
  r.push_back(make_json_reporter());
  r.push_back(make_html_reporter());
  r.push_back(make_junit_reporter());
  r.push_back(make_markdown_reporter());
  r.push_back(make_issue_reporter());
  return r;
}

void remove_run_files(const fs::path& dir) {
  std::vector<std::string> names = {kRunLogFileName};
  for (const auto& r : all_reporters()) names.push_back(r->file_name());
  for (const auto& name : names) remove_if_file(dir / name);
  // Temporaries of write_file_atomically() (NAME.tmp.PID.N) whose writer was killed: listed
  // first, removed after, so the listing is not read while it changes.
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().u8string();
    for (const auto& name : names)
      if (entry.size() > name.size() + 5 && entry.compare(0, name.size() + 5, name + ".tmp.") == 0)
        stale.push_back(it->path());
  }
  for (const auto& p : stale) remove_if_file(p);
}

std::vector<std::filesystem::path> write_reports(const Report& report,
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
