#include "harness/commands/run_command.h"

#include <algorithm>
#include <map>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/catalog/catalog.h"
#include "harness/catalog/plan.h"
#include "harness/platform/host.h"
#include "harness/python_facts/python_torch.h"
#include "harness/session/out_dir.h"
#include "harness/session/run_session.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/zygote.h"
#include "harness/torch/torch_kit.h"
#include "harness/version.h"
#include "reports/model/report_model_json.h"
#include "reports/torch_cases.h"

namespace fc::harness {
int run_cases(const RunOptions& options) {
  install_interrupt_handlers();
  start_guardian();
  // A package without the torch program builds it first, where it can (said before it starts),
  // when a torch case is among those asked for; they are said not to run, and why, otherwise.
  const TorchCases* torch = nullptr;
  if (!kTorchProgramBuilt) {
    torch = &torch_cases();
    const nlohmann::json& kit_cases = torch->facts.value("cases", nlohmann::json::array());
    bool asked = options.case_ids.empty();
    for (const auto& id : options.case_ids)
      asked = asked || std::find(kit_cases.begin(), kit_cases.end(), id) != kit_cases.end();
    if (asked) torch = &build_torch_cases(stderr);
    if (interrupted()) return interrupted_exit_status();
    if (torch->program.empty())
      for (const auto& id : options.case_ids)
        if (std::find(kit_cases.begin(), kit_cases.end(), id) != kit_cases.end()) {
          std::fprintf(
              stderr, "forkcheck: %s is a torch case: %s\n", id.c_str(),
              reports::torch_cases_sentence(reports::read_as<reports::TorchCases>(torch->facts))
                  .c_str());
          return exit_status::kError;
        }
  }
  Zygotes zygotes(options.zygote);
  Catalog cat = load_catalog_reporting_errors(&zygotes);
  // Before the plan: a catalog cut short by Ctrl-C lacks cases no one misspelt.
  if (interrupted()) return interrupted_exit_status();
  check_not_left_out(cat, options.case_ids);
  nlohmann::json cases = plan_cases(cat.cases, options.case_ids, options.only);
  if (interrupted()) return interrupted_exit_status();
  // Only now that the cases asked for are known to exist: bad input leaves no folder behind.
  const std::filesystem::path out =
      make_out_dir(options.out, options.argv.size() > 1 ? options.argv[1] : "run");

  RunSession session(out,
                     {{"command", "run"},
                      {"argv", options.argv},
                      {"options",
                       {{"timeout_s", options.timeout_s},
                        {"only", options.only},
                        {"jobs", options.jobs},
                        {"zygote", options.zygote}}},
                      {"catalog_errors", cat.errors}},
                     &zygotes);
  // Whose torch the catalog speaks of: the Python torch a user's program would import, beside the
  // libtorch the torch cases run against (found without importing torch: milliseconds).
  session.add_environment({{"python_torch", find_python_torch()}});
  if (torch) session.add_environment({{"torch_cases", torch->facts}});
  struct Planned {
    std::string case_id;
    nlohmann::json variant;
  };
  std::vector<Planned> runnable;
  std::vector<LaunchSpec> specs;
  size_t total = 0;
  // The run really starts (its plan is made, the environment probed): an earlier run's files in
  // the folder go now, before the first variant is said to have ended.
  session.begin();
  for (const auto& c : cases) {
    session.add_case(c);
    total += c["variants"].size();
  }
  session.set_total(total);
  for (const auto& c : cases) {
    for (const auto& v : c["variants"]) {
      if (v.value("expected", "") == "skip") {
        session.add_skip(c["id"].get<std::string>(), v);
        continue;
      }
      LaunchSpec spec;
      const std::string program =
          v.value("program", "").empty() ? c.value("program", "") : v.value("program", "");
      // The start method too: a forkserver is started before anything else in the program.
      spec.argv = {program,
                   "--run",
                   c.value("id", ""),
                   "--variant",
                   v.value("name", ""),
                   "--start-method",
                   v.value("start_method", "")};
      if (v.contains("env") && v["env"].is_object())
        for (const auto& [k, val] : v["env"].items())
          spec.env.emplace_back(k, val.get<std::string>());
      spec.timeout_s = options.timeout_s;
      // A catalog hang's functions name it (fc::join_pool, GOMP_barrier_wait); its source lines
      // would cost a tenth of a second of eu-stack per process.
      spec.stacks_source_lines = false;
      spec.zygote = zygotes.for_program(program);
      specs.push_back(spec);
      runnable.push_back({c["id"].get<std::string>(), v});
    }
  }

  std::vector<nlohmann::json> variants;
  std::vector<std::string> programs;
  for (size_t i = 0; i < specs.size(); ++i) {
    variants.push_back(runnable[i].variant);
    programs.push_back(specs[i].argv.at(0));
  }
  // Each program's start-up cost: the libraries it loads, as its catalog says (through a zygote,
  // how long its --list took no longer shows it); how long its --list took where a catalog does
  // not say.
  std::map<std::string, double> libraries;
  bool every_program_says = true;
  for (const auto& c : cat.cases) {
    if (c.contains("program_libraries") && c["program_libraries"].is_number())
      libraries[c.value("program", "")] = c["program_libraries"].get<double>();
    else
      every_program_says = false;
  }
  const std::vector<size_t> order =
      start_order(variants, programs, every_program_says ? libraries : cat.load_s);
  std::vector<LaunchSpec> ordered_specs;
  std::vector<Planned> ordered;
  for (size_t i : order) {
    ordered_specs.push_back(specs[i]);
    ordered.push_back(runnable[i]);
  }
  specs = std::move(ordered_specs);
  runnable = std::move(ordered);

  Supervisor().run(specs, options.jobs, [&](size_t i, ChildResult&& r) {
    // Interrupted once time was called: the tree's state then is its outcome, not "interrupted".
    if (r.interrupted_by != 0 && !time_was_called(r))
      session.add_interrupted(runnable[i].case_id, runnable[i].variant, r);
    else
      session.add_result(runnable[i].case_id, runnable[i].variant, r, classify(r, true));
  });

  nlohmann::json report = session.finish(interrupted() != 0);
  if (interrupted()) return interrupted_exit_status();
  if (!cat.errors.empty()) return exit_status::kError;  // a repro program could not list its cases
  return report["summary"]["ok"].get<bool>() ? exit_status::kOk : exit_status::kFinding;
}

}  // namespace fc::harness
