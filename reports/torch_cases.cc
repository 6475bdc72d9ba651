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

std::string ids_text(const json& facts) {
  std::string out;
  for (const auto& id : list(facts, "cases"))
    if (id.is_string()) out += (out.empty() ? "" : ", ") + id.get<std::string>();
  return out;
}

// "the torch /usr/bin/python3 imports (1.13.0a0)"
std::string whose(const json& facts) {
  const std::string torch = field(facts, "torch");
  return "the torch " + field(facts, "python", "python3") + " imports" +
         (torch.empty() ? "" : " (" + torch + ")");
}

std::string why_none(const json& facts) {
  std::string why = field(facts, "why");
  const std::string detail = field(facts, "detail");
  if (why == "no-python") return "no python3 to find a torch with (" + detail + ")";
  if (why == "python-failed")
    return field(facts, "python", "python3") + " could not say which torch it imports (" + detail +
           ")";
  if (why == "no-cuda-toolkit")
    return "building them against " + whose(facts) + " needs the CUDA toolkit: " + detail +
           " (or a CPU build of torch)";
  if (why == "no-torch")
    return field(facts, "python", "python3") +
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
           (field(facts, "log").empty() ? "" : "; its log: " + field(facts, "log"));
  if (why == "not-built")
    return "`forkcheck all` (or `forkcheck run` of one of them) builds them on first use against " +
           whose(facts) + ", once per torch";
  return why;
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

std::string torch_cases_sentence(const json& facts) {
  if (!facts.is_object()) return "";
  const std::string source = field(facts, "source");
  if (source == "built-in" || source.empty()) return "";
  const std::string ids = ids_text(facts);
  if (field(facts, "why") == "no-kit") return kNoTorchProgram;
  if (source == "built-here") {
    const json& took = member(facts, "build_s");
    return std::to_string(list(facts, "cases").size()) + " (" + ids + "), built here against " +
           whose(facts) + ", from this package's torch kit" +
           (field(facts, "built_at").empty() ? ""
                                             : ", on " + field(facts, "built_at").substr(0, 10)) +
           (took.is_number() ? ", in " + minutes_text(took.get<double>()) : "");
  }
  return std::string(field(facts, "why") == "not-built" ? "not built yet" : "none run") +
         (ids.empty() ? "" : " (" + ids + ")") + ": " + why_none(facts);
}

std::string run_torch_cases_text(const json& env) {
  if (const json& facts = member(env, "torch_cases"); facts.is_object())
    return torch_cases_sentence(facts);
  return built_without_torch(env) ? kNoTorchProgram : "";
}

std::string torch_build_announcement(const json& facts) {
  const std::size_t n = list(facts, "cases").size();
  std::string s = "forkcheck: building the " + std::to_string(n) + " torch cases against " +
                  whose(facts) + ", once: " + field(facts, "cmake", "cmake") + " and " +
                  field(facts, "compiler", "a C++ compiler") + ", " +
                  display(member(facts, "jobs")) + " jobs, in " + field(facts, "build_dir") +
                  " (log: " + field(facts, "log") + ").";
  const json& last = member(facts, "last_build");
  if (last.is_object() && member(last, "build_s").is_number())
    s += " The last build here took " + minutes_text(last["build_s"].get<double>()) + " (" +
         display(member(last, "jobs")) + " jobs, torch " + field(last, "torch", "?") + ").";
  else if (kKitBuildMeasured.seconds > 0)
    s += std::string(" On forkcheck's ") + std::to_string(kKitBuildMeasured.cpus) +
         "-CPU test machine it took " + minutes_text(kKitBuildMeasured.seconds) +
         " against torch " + kKitBuildMeasured.torch + " (measured " + kKitBuildMeasured.date +
         "); more CPUs take less.";
  return s + " Ctrl-C ends it and the run; if it fails, the other cases run without it.";
}

std::string torch_build_done(const json& facts) {
  if (field(facts, "why") == "interrupted")
    return "forkcheck: the torch cases' build was interrupted: nothing of it is kept";
  if (field(facts, "why") == "failed")
    return "forkcheck: the torch cases' build failed, and they will not run: " +
           field(facts, "detail") +
           (field(facts, "log").empty() ? "" : "; its log: " + field(facts, "log"));
  const json& took = member(facts, "build_s");
  return "forkcheck: the torch cases are built" +
         (took.is_number() ? " (" + minutes_text(took.get<double>()) + ")" : std::string()) + ": " +
         field(facts, "program");
}

}  // namespace fc::reports
