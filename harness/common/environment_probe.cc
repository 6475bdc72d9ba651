#include "harness/common/environment_probe.h"

#include <filesystem>
#include <string>

#include "harness/common/catalog.h"
#include "harness/platform/zygote.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {
namespace {

// Runs `program --env` under the supervisor; the environment, or why there is none.
nlohmann::json ask(const std::string& program, double timeout_s, Zygotes* zygotes, std::string& why) {
  LaunchSpec spec;
  if (zygotes) spec.zygote = zygotes->for_program(program);
  spec.argv = {program, "--env"};
  spec.timeout_s = timeout_s;
  ChildResult r = supervise(spec);
  const std::string name = std::filesystem::path(program).filename().string();
  if (r.interrupted_by != 0) {
    why = "forkcheck was interrupted while " + name + " --env ran";
  } else if (!r.started) {
    why = name + " could not be started: " + r.start_error;
  } else if (!r.exit.exited_ok()) {
    why = name + " --env failed: " + r.exit.describe() + " " + r.err.last_lines(2);
  } else if (!r.result || !r.result->contains("environment") || !(*r.result)["environment"].is_object()) {
    why = name + " --env sent no environment";
  } else {
    return (*r.result)["environment"];
  }
  return nullptr;
}

}  // namespace

nlohmann::json collect_environment(double timeout_s, Zygotes* zygotes) {
  const auto programs = repro_programs();  // {native, torch}
  std::string torch_why, native_why;
  nlohmann::json env = ask(programs.at(1), timeout_s, zygotes, torch_why);
  if (!env.is_null()) return env;
  if (torch_why.rfind("forkcheck was interrupted", 0) == 0) return {{"error", torch_why}};
  env = ask(programs.at(0), timeout_s, zygotes, native_why);
  if (env.is_null()) return {{"error", "no repro program could report the environment: " + torch_why + "; " + native_why}};
  // Without libtorch's facts, and the report says why.
  env["collected_by"]["fallback"] = torch_why + "; these facts come from the native repro program instead";
  return env;
}

}  // namespace fc::harness
