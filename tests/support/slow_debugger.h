// A stand-in debugger for the tests of stack taking (supervisor_test, adversarial_test).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace fc::harness {

// A stand-in eu-stack that sleeps `seconds`, prints `message` on stderr and fails, first on PATH
// and chosen with FORKCHECK_STACKS while it lives: stacks that take long to come. Each run
// appends "start" and "end" lines with the time in ns to log() (the end line only when not
// killed). `stops_its_process`: it first stops the process it was asked about (SIGSTOP), as a
// real debugger's attach does, and leaves it stopped.
class SlowDebugger {
 public:
  SlowDebugger(double seconds, const std::string& message, bool stops_its_process = false)
      : dir_(testing::TempDir() + "/slow-debugger-" + std::to_string(::getpid()) + "-" +
             std::to_string(++count_)),
        old_path_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    // A folder an earlier test process with the same pid left (pids wrap in a long suite) would
    // add its runs to this one's log.
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    std::filesystem::create_directories(dir_);
    const std::string script = dir_ + "/eu-stack";
    std::FILE* f = std::fopen(script.c_str(), "w");
    EXPECT_NE(f, nullptr);
    if (f) {
      std::fprintf(f,
                   "#!/bin/sh\necho start $(date +%%s%%N) >> '%s'\n%ssleep %g\n"
                   "echo end $(date +%%s%%N) >> '%s'\necho '%s' >&2\nexit 1\n",
                   log().c_str(),
                   stops_its_process ? "for a; do pid=$a; done; kill -STOP $pid\n" : "", seconds,
                   log().c_str(), message.c_str());
      std::fclose(f);
    }
    ::chmod(script.c_str(), 0755);
    ::setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
    ::setenv("FORKCHECK_STACKS", "eu-stack", 1);
  }
  ~SlowDebugger() {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("FORKCHECK_STACKS");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  SlowDebugger(const SlowDebugger&) = delete;
  SlowDebugger& operator=(const SlowDebugger&) = delete;
  std::string log() const { return dir_ + "/runs.log"; }
  // The most runs that were under way at once, from the log.
  int most_at_once() const {
    std::vector<std::pair<double, int>> events;  // time, +1 start / -1 end
    for (double t : times("start")) events.emplace_back(t, 1);
    for (double t : times("end")) events.emplace_back(t, -1);
    std::sort(events.begin(), events.end());
    int now = 0, most = 0;
    for (const auto& e : events) most = std::max(most, now += e.second);
    return most;
  }
  int runs() const { return static_cast<int>(times("start").size()); }
  // The times (s) of every "start" or "end" line, in order.
  std::vector<double> times(const std::string& kind) const {
    std::ifstream in(log());
    std::string what;
    long long t = 0;
    std::vector<double> out;
    while (in >> what >> t)
      if (what == kind) out.push_back(static_cast<double>(t) / 1e9);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static inline int count_ = 0;
  std::string dir_, old_path_;
};

}  // namespace fc::harness
