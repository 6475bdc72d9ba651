#include "reports/torch_cases.h"

#include <cmath>
#include <cstdio>

#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/whose_torch.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

// forkcheck's own kit build, measured by the install.portable_torch test on the 2-CPU development
// machine (Debian bookworm, GCC 12, Ninja, ccache off, 2 jobs; it prints the figure): what a first
// build is said to take where no build was recorded here yet.
struct Measured {
  double seconds;
  int cpus;
  const char* torch;
  const char* date;
};
constexpr Measured kKitBuildMeasured = {69, 2, "1.13", "2026-11-28"};

std::string ids_text(const TorchCases& facts) {
  std::string out;
  for (const auto& id : facts.cases) out += (out.empty() ? "" : ", ") + id;
  return out;
}

std::string python_of(const TorchCases& facts) { return or_else(facts.python, "python3"); }

// "the torch /usr/bin/python3 imports (1.13.0a0)"
std::string whose(const TorchCases& facts) {
  return "the torch " + python_of(facts) + " imports" +
         (facts.torch.empty() ? "" : " (" + facts.torch + ")");
}

std::string why_none(const TorchCases& facts) {
  const std::string& why = facts.why;
  const std::string& detail = facts.detail;
  if (why == "no-python") return "no python3 to find a torch with (" + detail + ")";
  if (why == "python-failed")
    return python_of(facts) + " could not say which torch it imports (" + detail + ")";
  if (why == "no-cuda-toolkit")
    return "building them against " + whose(facts) + " needs the CUDA toolkit: " + detail +
           " (or a CPU build of torch)";
  if (why == "no-torch")
    return python_of(facts) +
           " imports no torch; they are built on first use against the torch python3 imports";
  if (why == "no-cache") return "there is no folder to build them in (" + detail + ")";
  if (why == "no-cmake")
    return "building them against " + whose(facts) + " needs CMake: " + detail +
           " (pip install cmake)";
  if (why == "no-compiler")
    return "building them against " + whose(facts) + " needs a C++ compiler: " + detail;
  if (why == "busy") return detail + " against " + whose(facts) + "; run again when it is done";
  if (why == "interrupted") return "their build against " + whose(facts) + " was interrupted";
  if (why == "failed")
    return "their build against " + whose(facts) + " failed: " + detail +
           (facts.log.empty() ? "" : "; its log: " + facts.log);
  if (why == "not-built")
    return "`forkcheck all` (or `forkcheck run` of one of them) builds them on first use against " +
           whose(facts) + ", once per torch";
  return why;
}

std::string count_text(const std::optional<long long>& n) {
  return n ? std::to_string(*n) : std::string();
}

}  // namespace

std::string minutes_text(double seconds) {
  const long total = std::lround(seconds);
  char buf[48];
  if (total < 60)
    std::snprintf(buf, sizeof buf, "%ld s", total);
  else
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", total / 60, total % 60);
  return buf;
}

std::string torch_cases_sentence(const TorchCases& facts) {
  const std::string& source = facts.source;
  if (source == "built-in" || source.empty()) return "";
  const std::string ids = ids_text(facts);
  if (facts.why == "no-kit") return kNoTorchProgram;
  if (source == "built-here")
    return std::to_string(facts.cases.size()) + " (" + ids + "), built here against " +
           whose(facts) + ", from this package's torch kit" +
           (facts.built_at.empty() ? "" : ", on " + facts.built_at.substr(0, 10)) +
           (facts.build_s ? ", in " + minutes_text(*facts.build_s) : "");
  return std::string(facts.why == "not-built" ? "not built yet" : "none run") +
         (ids.empty() ? "" : " (" + ids + ")") + ": " + why_none(facts);
}

std::string run_torch_cases_text(const Environment& env) {
  if (env.torch_cases) return torch_cases_sentence(*env.torch_cases);
  return built_without_torch(env) ? kNoTorchProgram : "";
}

std::string torch_build_announcement(const TorchCases& facts) {
  std::string s = "forkcheck: building the " + std::to_string(facts.cases.size()) +
                  " torch cases against " + whose(facts) +
                  ", once: " + or_else(facts.cmake, "cmake") + " and " +
                  or_else(facts.compiler, "a C++ compiler") + ", " + count_text(facts.jobs) +
                  " jobs, in " + facts.build_dir + " (log: " + facts.log + ").";
  if (facts.last_build && facts.last_build->build_s)
    s += " The last build here took " + minutes_text(*facts.last_build->build_s) + " (" +
         count_text(facts.last_build->jobs) + " jobs, torch " +
         or_else(facts.last_build->torch, "?") + ").";
  else if (kKitBuildMeasured.seconds > 0)
    s += std::string(" On forkcheck's ") + std::to_string(kKitBuildMeasured.cpus) +
         "-CPU test machine it took " + minutes_text(kKitBuildMeasured.seconds) +
         " against torch " + kKitBuildMeasured.torch + " (measured " + kKitBuildMeasured.date +
         "); more CPUs take less.";
  return s + " Ctrl-C ends it and the run; if it fails, the other cases run without it.";
}

std::string torch_build_done(const TorchCases& facts) {
  if (facts.why == "interrupted")
    return "forkcheck: the torch cases' build was interrupted: nothing of it is kept";
  if (facts.why == "failed")
    return "forkcheck: the torch cases' build failed, and they will not run: " + facts.detail +
           (facts.log.empty() ? "" : "; its log: " + facts.log);
  return "forkcheck: the torch cases are built" +
         (facts.build_s ? " (" + minutes_text(*facts.build_s) + ")" : std::string()) + ": " +
         facts.program;
}

}  // namespace fc::reports
