#include "harness/session/environment_probe.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "harness/catalog/case_signs.h"
#include "harness/catalog/catalog.h"
#include "harness/catalog/known_messages.h"
#include "harness/platform/host.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/zygote.h"
#include "launch/host_facts.h"
#include "reports/model/report_model_json.h"
#include "reports/ticket_environment.h"

namespace fc::harness {
namespace {

// Runs `program --env` under the supervisor; the environment, or why there is none.
nlohmann::json ask(const std::string& program, double timeout_s, Zygotes* zygotes,
                   std::string& why) {
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
  } else if (!r.result || !r.result->contains("environment") ||
             !(*r.result)["environment"].is_object()) {
    why = name + " --env sent no environment";
  } else {
    return (*r.result)["environment"];
  }
  return nullptr;
}

}  // namespace

nlohmann::json user_program_environment() {
  nlohmann::json env = launch::host_environment(executable_path().u8string());
  env["collected_by"]["user_program"] = true;  // reports/ leaves out the catalog's libtorch
  env["collected_by"]["note"] =
      "forkcheck itself: the machine's facts; what the program loads (its torch, OpenMP and "
      "threads) is said by its own Python side, under \"python\"";
  return env;
}

nlohmann::json collect_environment(double timeout_s, Zygotes* zygotes) {
  const auto programs = repro_programs();  // {native, torch}, or {native}
  std::string torch_why, native_why;
  if (programs.size() < 2) {
    nlohmann::json env = ask(programs.at(0), timeout_s, zygotes, native_why);
    if (env.is_null())
      return {
          {"error", "the native repro program could not report the environment: " + native_why}};
    env["collected_by"]["torch_program"] = false;  // a native build: reports/ says so
    return env;
  }
  nlohmann::json env = ask(programs.at(1), timeout_s, zygotes, torch_why);
  if (!env.is_null()) return env;
  if (torch_why.rfind("forkcheck was interrupted", 0) == 0) return {{"error", torch_why}};
  env = ask(programs.at(0), timeout_s, zygotes, native_why);
  if (env.is_null())
    return {{"error",
             "no repro program could report the environment: " + torch_why + "; " + native_why}};
  // Without libtorch's facts, and the report says why.
  env["collected_by"]["fallback"] =
      torch_why + "; these facts come from the native repro program instead";
  return env;
}

nlohmann::json measure_machine() {
  nlohmann::json machine = machine_limits();
  if (const std::uint64_t started = inherited_descriptor_limit(); started != 0)
    machine["open_files"]["soft"] = started;
  nlohmann::json vars = nlohmann::json::object();
  for (const auto& [name, value] : environment_variables())
    for (const char* prefix : {"OMP_", "MKL_", "KMP_", "GOMP_"})
      if (name.rfind(prefix, 0) == 0) vars[name] = value;
  machine["variables"] = vars;
  return machine;
}

nlohmann::json ticket_environment(const TicketEnvironmentOptions& options) {
  // The Python side first: an interpreter the user named that cannot be run is a usage error,
  // said before anything else is started.
  nlohmann::json python = probe_python(options.python);
  nlohmann::json env = collect_environment(options.timeout_s);
  env["machine"] = measure_machine();
  env["python"] = std::move(python);
  env["risks"] = reports::environment_risks(reports::read_as<reports::Environment>(env));
  name_risk_cases(env["risks"], case_signs());  // a risk a catalog case shows: its page
  return env;
}

}  // namespace fc::harness
