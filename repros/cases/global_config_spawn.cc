// global-config-spawn (source 002): a module-level config (`kira_conf`) whose constructor sets
// ROOT, and whose setup(), called under `if __name__ == "__main__":`, adds PARAMS_RL_FILE,
// server_ip and server_port. spawn and forkserver workers never run the parent's main: they see
// only what the constructor set. In C++ the same holds: a namespace-scope object is constructed in
// every process (static initialisation, the analogue of the import), while the case's parent
// (the analogue of main) is the only place setup() runs.
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace global_config_spawn {

using fc::Outcome;
using nlohmann::json;

constexpr int kWorkers = 4;
constexpr const char* kEnvCls = "ShortKick";  // env_cls.__name__ in the source
const std::vector<std::string> kSetUpKeys = {"PARAMS_RL_FILE", "server_ip", "server_port"};

struct Config {
  json values = {{"ROOT", "config/parameters"}};  // what the constructor sets
  void setup(const std::string& env_cls) {
    values["PARAMS_RL_FILE"] = "config/parameters/" + env_cls + "/param.yaml";
    values["server_ip"] = "localhost";
    values["server_port"] = 4100;
  }
};

Config kira_conf;  // constructed in every process, like a module-level object at import

json keys_of(const json& values) {
  json keys = json::array();
  for (const auto& item : values.items()) keys.push_back(item.key());
  return keys;
}

FORKCHECK_WORKER(config_worker) {
  const int me = payload.at("worker").get<int>();
  if (payload.value("setup_in_worker", false)) kira_conf.setup(kEnvCls);  // fix: runs everywhere
  if (payload.contains("config")) kira_conf.values = payload["config"];   // fix: carried along
  std::string lost;
  for (const auto& k : kSetUpKeys)
    if (!kira_conf.values.contains(k)) lost += (lost.empty() ? "" : ", ") + k;
  if (!lost.empty())
    throw std::runtime_error(
        "worker " + std::to_string(me) + " (pid " +
        std::to_string(fc::launch::current_process_id()) + ") sees only " +
        keys_of(kira_conf.values).dump() + ": lost " + lost +
        " (set by setup() in the parent's main, which never ran in this process)" +
        (lost.find("server_ip") != std::string::npos
             ? "; it has no address for the game host (this case runs no host to try)"
             : ""));
  return {{"worker", me},
          {"pid", fc::launch::current_process_id()},
          {"keys", keys_of(kira_conf.values)},
          {"would_connect_to", kira_conf.values["server_ip"].get<std::string>() + ":" +
                                   std::to_string(kira_conf.values["server_port"].get<int>())}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  kira_conf.setup(kEnvCls);  // `if __name__ == "__main__": kira_conf.setup(env_cls.__name__)`
  json details = {{"parent_config", kira_conf.values}};
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i) {
    json p = {{"worker", i}};
    if (variant.name.find("setup-in-worker") != std::string::npos) p["setup_in_worker"] = true;
    if (variant.name.find("config-in-payload") != std::string::npos) p["config"] = kira_conf.values;
    payloads.push_back(std::move(p));
  }
  auto workers = fc::start_pool(variant, "config_worker", payloads);
  auto result = fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(20)), details);
  if (result.outcome == Outcome::kOk)
    result.message =
        "all " + std::to_string(kWorkers) + " workers see " + keys_of(kira_conf.values).dump();
  return result;
}

std::vector<fc::VariantSpec> variants() {
  const char* lost =
      "the worker never runs the parent's main(), where setup() ran; it has only what the "
      "config's constructor set (ROOT), as Python's spawn/forkserver re-import __main__ as "
      "__mp_main__";
  return {
      fc::hazard(
          "fork", "fork", Outcome::kOk,
          "a fork child is a copy of the parent's memory after setup(): it sees all four "
          "keys (the source's fork output prints the parent's config object, at the parent's "
          "address, in every worker)",
          "setup() in the parent's main, 4 fork workers read the config"),
      fc::hazard("spawn", "spawn", Outcome::kError, lost,
                 "setup() in the parent's main, 4 spawn workers read the config"),
      fc::hazard("forkserver", "forkserver", Outcome::kError,
                 std::string(lost) + "; the server itself was forked before setup()",
                 "setup() in the parent's main, 4 forkserver workers read the config"),
      fc::fix("spawn-setup-in-worker", "spawn",
              "set-up that runs in every process (the source moved setup() to module level)",
              "as `spawn`, each worker calls setup() itself"),
      fc::fix("spawn-config-in-payload", "spawn",
              "the configured values travel with the worker's input",
              "as `spawn`, the parent's config is part of each worker's payload"),
      fc::fix("forkserver-config-in-payload", "forkserver",
              "the configured values travel with the worker's input",
              "as `forkserver`, the parent's config is part of each worker's payload"),
  };
}

FORKCHECK_CASE(global_config_spawn_case) {
  fc::CaseDef c;
  c.id = "global-config-spawn";
  c.title = "A global config set up in main is missing in spawn and forkserver workers";
  c.source_title = "untitled: 需要用到SubprocVecEnv并行采样 (section 多进程地址空间)";
  c.source_author = "not named (its traceback's home directory is /home/illya)";
  c.source_doc = "002";
  c.reported =
      "kira_conf.setup(env_cls.__name__) runs under `if __name__ == \"__main__\":`; the workers "
      "print {'ROOT': PosixPath('config/parameters')} where PARAMS_RL_FILE, server_ip and "
      "server_port should be too. Moving setup() out of main fixes it.";
  c.mechanism =
      "spawn (and the forkserver) start the worker from a fresh interpreter that imports the main "
      "module as __mp_main__: module-level code runs, the __main__ block does not. A fork child "
      "is instead a copy of the parent after set-up. In C++, a spawned worker is a fresh exec: "
      "static initialisation runs, the parent's main() code path does not.";
  c.platforms = "any (spawn, forkserver)";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"An attempt has been made to start a new process before the current process has finished "
       "its bootstrapping phase",
       "a spawned worker re-imports the main module, and this one starts processes when "
       "imported: put the program's start under `if __name__ == \"__main__\":`"},
      {"on <module '__mp_main__'",
       "a spawned worker re-imports the main module as __mp_main__, where what is defined under "
       "`if __name__ == \"__main__\":` does not exist: define the worker at module level"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"start-methods"};
  return c;
}

}  // namespace global_config_spawn
}  // namespace
