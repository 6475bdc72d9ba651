#include "harness/commands/watch_command.h"

#include "harness/common/out_dir.h"
#include "harness/common/program_lookup.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/common/subject_command.h"
#include "harness/common/usage_error.h"
#include "harness/supervise/interrupt.h"
#include "harness/watch/fork_events.h"
#include "harness/watch/fork_hazards.h"
#include "harness/watch/preload.h"
#include "harness/watch/watch_summary.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// report.json lists at most this many safe and this many hazardous forks (the totals count all).
constexpr size_t kListedPerKind = 500;

json listed_forks(const json& forks) {
  json out = json::array();
  size_t hazardous = 0, safe = 0;
  for (const auto& f : forks) {
    size_t& n = f["hazards"].empty() ? safe : hazardous;
    if (n++ < kListedPerKind) out.push_back(f);
  }
  return out;
}

fs::path events_dir(const fs::path& out) {
  return fs::absolute(out / "watch-events").lexically_normal();
}

void make_fresh(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);  // events of an earlier watch must not be read as this one's
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("watch: cannot create " + dir.string() + ": " + ec.message());
}

uint64_t monotonic_ns() {  // the shim's clock: CLOCK_MONOTONIC, as steady_clock is on Linux
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

int watch_command(const WatchOptions& options) {
  if (options.command.empty())
    throw UsageError("watch: no command given (forkcheck watch -- CMD ARGS...)");
  const std::string program = resolve_command(options.command.front(), "watch");
  const fs::path events = events_dir(options.out);
  // Whether this can be watched at all is known before anything is written.
  auto env = watch_environment(program, events.string());
  prepare_out_dir(options.out);
  make_fresh(events);

  SubjectCommand subject;
  subject.name = "watch";
  subject.argv = options.argv;
  subject.command = options.command;
  subject.out = options.out;
  subject.timeout_s = options.timeout_s;
  subject.env = env;

  json forks = json::array(), totals = fork_totals(forks);
  const uint64_t start_ns = monotonic_ns();
  subject.annotate = [&](const ChildResult&, json& details, std::string& message) {
    WatchEvents ev = read_watch_events(events);
    forks = pair_fork_events(ev.events, start_ns);
    add_hazards(forks);
    totals = fork_totals(forks);
    details["forks"] = listed_forks(forks);
    details["watch"] = {{"totals", totals},
                        {"forks_listed", details["forks"].size()},
                        {"events_dir", events.string()},
                        {"event_files", ev.files},
                        {"bad_event_lines", ev.bad_lines},
                        {"preload", env.front().first + "=" + env.front().second}};
    if (!message.empty()) message += "; ";
    message += watch_headline(totals);
  };

  SubjectResult done = run_subject(subject, program);
  const std::string summary = watch_summary(forks, totals);  // escaped for the terminal
  std::fwrite(summary.data(), 1, summary.size(), stdout);
  std::fflush(stdout);
  if (done.interrupted) return interrupted_exit_status();
  const ExitStatus& e = done.result.exit;
  if (e.signal != 0) return 128 + e.signal;
  return e.ended ? e.code : 1;
}

}  // namespace fc::harness
