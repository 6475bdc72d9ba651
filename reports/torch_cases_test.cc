// A package's torch cases in words (reports/torch_cases.h), from made-up facts: each state says
// which cases and why, and the announcement of a build says how long it may take only from a
// measurement.
#include <string>

#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"
#include "reports/torch_cases.h"
#include "reports/whose_torch.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

json facts(const char* why) {
  return {{"source", "none"},
          {"why", why},
          {"detail", "the detail"},
          {"cases", {"case-one", "case-two"}},
          {"python", "/usr/bin/python3"},
          {"torch", "1.13.0a0"}};
}

// The facts as the harness hands them over (JSON), read as the model.
std::string sentence(const json& f) { return torch_cases_sentence(read_as<TorchCases>(f)); }
std::string announcement(const json& f) { return torch_build_announcement(read_as<TorchCases>(f)); }
std::string done(const json& f) { return torch_build_done(read_as<TorchCases>(f)); }
std::string run_text(const json& env) { return run_torch_cases_text(read_as<Environment>(env)); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TorchCases, EveryReasonNamesTheCasesAndWhy) {
  const std::string no_torch = sentence(facts("no-torch"));
  EXPECT_TRUE(has(no_torch, "none run (case-one, case-two)")) << no_torch;
  EXPECT_TRUE(has(no_torch, "/usr/bin/python3 imports no torch")) << no_torch;
  const std::string no_cmake = sentence(facts("no-cmake"));
  EXPECT_TRUE(has(no_cmake, "needs CMake: the detail (pip install cmake)")) << no_cmake;
  EXPECT_TRUE(has(no_cmake, "the torch /usr/bin/python3 imports (1.13.0a0)")) << no_cmake;
  EXPECT_TRUE(has(sentence(facts("no-compiler")), "needs a C++ compiler: the detail"));
  json failed = facts("failed");
  failed["log"] = "/c/build.log";
  EXPECT_TRUE(has(sentence(failed), "failed: the detail; its log: /c/build.log"));
  const std::string later = sentence(facts("not-built"));
  EXPECT_TRUE(has(later,
                  "not built yet (case-one, case-two): `forkcheck all` "
                  "(or `forkcheck run` of one of them) builds them on first use against "
                  "the torch /usr/bin/python3 imports (1.13.0a0), once per torch"))
      << later;
  EXPECT_EQ(sentence(facts("no-kit")), kNoTorchProgram);
  EXPECT_TRUE(has(sentence(facts("busy")), "the detail against the torch"));
  EXPECT_TRUE(has(sentence(facts("no-cuda-toolkit")),
                  "needs the CUDA toolkit: the detail (or a CPU build of torch)"));
  EXPECT_TRUE(has(sentence(facts("python-failed")),
                  "/usr/bin/python3 could not say which torch it imports (the detail)"));
}

TEST(TorchCases, ABuildHereSaysAgainstWhichTorchAndHowLongItTook) {
  json built = facts("");
  built.erase("why");
  built["source"] = "built-here";
  built["built_at"] = "2026-11-28T17:00:00Z";
  built["build_s"] = 245.4;
  EXPECT_EQ(sentence(built),
            "2 (case-one, case-two), built here against the torch "
            "/usr/bin/python3 imports (1.13.0a0), from this package's torch kit, on 2026-11-28, "
            "in 4 min 05 s");
  EXPECT_EQ(sentence({{"source", "built-in"}}), "") << "the libtorch line says it";
}

TEST(TorchCases, TheAnnouncementTakesTheLastBuildHereBeforeAnyOtherFigure) {
  json f = facts("not-built");
  f["cmake"] = "/usr/bin/cmake";
  f["compiler"] = "/usr/bin/c++";
  f["jobs"] = 8;
  f["build_dir"] = "/c/torch-1.13.0a0-0123";
  f["log"] = "/c/torch-1.13.0a0-0123/build.log";
  const std::string first = announcement(f);
  EXPECT_TRUE(has(first,
                  "building the 2 torch cases against the torch /usr/bin/python3 imports "
                  "(1.13.0a0), once: /usr/bin/cmake and /usr/bin/c++, 8 jobs"))
      << first;
  EXPECT_FALSE(has(first, "last build here")) << first;
  f["last_build"] = {{"build_s", 61.0}, {"jobs", 2}, {"torch", "2.3.0"}};
  const std::string again = announcement(f);
  EXPECT_TRUE(has(again, "The last build here took 1 min 01 s (2 jobs, torch 2.3.0)")) << again;
}

TEST(TorchCases, TheEndOfABuildIsSaidAsItEnded) {
  json f = facts("failed");
  f["log"] = "/c/build.log";
  EXPECT_EQ(done(f),
            "forkcheck: the torch cases' build failed, and they will not run: the detail; its "
            "log: /c/build.log");
  EXPECT_EQ(done(facts("interrupted")),
            "forkcheck: the torch cases' build was interrupted: nothing of it is kept");
  json built = {{"source", "built-here"}, {"build_s", 36.2}, {"program", "/c/bin/p"}};
  EXPECT_EQ(done(built), "forkcheck: the torch cases are built (36 s): /c/bin/p");
}

TEST(TorchCases, ARunSaysWhatItsEnvironmentRecorded) {
  EXPECT_EQ(run_text({{"collected_by", {{"torch_program", false}}}}), kNoTorchProgram)
      << "a run recorded before kits";
  EXPECT_TRUE(has(
      run_text({{"collected_by", {{"torch_program", false}}}, {"torch_cases", facts("no-torch")}}),
      "imports no torch"));
  EXPECT_EQ(run_text({{"libtorch", {{"version", "1.13.0"}}}}), "");
  EXPECT_EQ(minutes_text(59.4), "59 s");
  EXPECT_EQ(minutes_text(600), "10 min 00 s");
}

}  // namespace
}  // namespace fc::reports
