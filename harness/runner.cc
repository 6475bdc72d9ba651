#include "harness/runner.h"

#include <algorithm>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "harness/catalog.h"
#include "harness/classify.h"
#include "harness/guardian.h"
#include "harness/host.h"
#include "harness/interrupt.h"
#include "harness/plan.h"
#include "harness/run_session.h"
#include "harness/supervisor.h"
#include "harness/usage_error.h"
#include "harness/zygote.h"

namespace fc::harness {
namespace {

Catalog catalog_or_die(Zygotes* zygotes = nullptr) {
  Catalog cat = load_catalog(repro_programs(), zygotes);
  for (const auto& e : cat.errors) std::cerr << "forkcheck: " << e << "\n";
  return cat;
}

}  // namespace

void prepare_out_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create --out directory " + dir.string() + ": " + ec.message());
  auto probe = dir / (".forkcheck-write-test." + std::to_string(current_process_id()));
  if (!std::ofstream(probe)) throw UsageError("--out directory " + dir.string() + " is not writable");
  std::filesystem::remove(probe, ec);
}

int list_cases() {
  Catalog cat = catalog_or_die();
  // Columns as wide as their longest entry (variant names run to 28 characters).
  int name_w = 4, method_w = 4;
  for (const auto& c : cat.cases)
    for (const auto& v : c["variants"]) {
      name_w = std::max(name_w, static_cast<int>(v.value("name", "").size()));
      method_w = std::max(method_w, static_cast<int>(v.value("start_method", "").size()));
    }
  for (const auto& c : cat.cases) {
    std::printf("%-22s %s\n", c.value("id", "").c_str(), c.value("title", "").c_str());
    std::printf("%-22s source %s: %s (%s); applies to: %s\n", "",
                c["source"].value("document", "").c_str(), c["source"].value("title", "").c_str(),
                c["source"].value("author", "").c_str(), c.value("platforms", "").c_str());
    for (const auto& v : c["variants"])
      std::printf("%-22s   %-*s %-*s %-6s expects %s\n", "", name_w, v.value("name", "").c_str(),
                  method_w, v.value("start_method", "").c_str(), v.value("role", "").c_str(),
                  v.value("expected", "").c_str());
  }
  return cat.errors.empty() ? 0 : 1;
}

int run_cases(const RunOptions& options) {
  prepare_out_dir(options.out);
  install_interrupt_handlers();
  start_guardian();
  Zygotes zygotes(options.zygote);
  Catalog cat = catalog_or_die(&zygotes);
  nlohmann::json cases = plan_cases(cat.cases, options.case_ids, options.only);
  if (interrupted()) return interrupted_exit_status();

  RunSession session(options.out,
                     {{"command", "run"},
                      {"argv", options.argv},
                      {"options", {{"timeout_s", options.timeout_s}, {"only", options.only},
                                   {"jobs", options.jobs}, {"zygote", options.zygote}}},
                      {"catalog_errors", cat.errors}},
                     &zygotes);
  struct Planned {
    std::string case_id;
    nlohmann::json variant;
  };
  std::vector<Planned> runnable;
  std::vector<LaunchSpec> specs;
  size_t total = 0;
  for (const auto& c : cases) {
    session.add_case(c);
    total += c["variants"].size();
  }
  session.set_total(total);
  for (const auto& c : cases) {
    for (const auto& v : c["variants"]) {
      if (v.value("expected", "") == "skip") {
        session.add_skip(c["id"], v);
        continue;
      }
      LaunchSpec spec;
      const std::string program = v.value("program", "").empty() ? c.value("program", "")
                                                                   : v.value("program", "");
      spec.argv = {program, "--run", c.value("id", ""), "--variant", v.value("name", "")};
      if (v.contains("env") && v["env"].is_object())
        for (const auto& [k, val] : v["env"].items()) spec.env.emplace_back(k, val.get<std::string>());
      spec.timeout_s = options.timeout_s;
      spec.zygote = zygotes.for_program(program);
      specs.push_back(spec);
      runnable.push_back({c["id"], v});
    }
  }

  std::vector<nlohmann::json> variants;
  std::vector<std::string> programs;
  for (size_t i = 0; i < specs.size(); ++i) {
    variants.push_back(runnable[i].variant);
    programs.push_back(specs[i].argv.at(0));
  }
  const std::vector<size_t> order = start_order(variants, programs, cat.load_s);
  std::vector<LaunchSpec> ordered_specs;
  std::vector<Planned> ordered;
  for (size_t i : order) {
    ordered_specs.push_back(specs[i]);
    ordered.push_back(runnable[i]);
  }
  specs = std::move(ordered_specs);
  runnable = std::move(ordered);

  Supervisor().run(specs, options.jobs, [&](size_t i, ChildResult&& r) {
    if (r.interrupted_by != 0)
      session.add_interrupted(runnable[i].case_id, runnable[i].variant, r);
    else
      session.add_result(runnable[i].case_id, runnable[i].variant, r, classify(r, true));
  });

  nlohmann::json report = session.finish(interrupted() != 0);
  if (interrupted()) return interrupted_exit_status();
  return report["summary"]["ok"].get<bool>() && cat.errors.empty() ? 0 : 1;
}

}  // namespace fc::harness
