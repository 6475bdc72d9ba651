#include "harness/commands/env_command.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "harness/base/exit_status_codes.h"
#include "harness/platform/host.h"
#include "harness/platform/install_layout.h"
#include "harness/session/environment_probe.h"
#include "harness/version.h"
#include "reports/model/report_model_json.h"
#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::harness {
namespace {

// A row per line, its value escaped for the terminal (library and device names, what an
// interpreter printed: nothing here may drive the terminal).
void print_rows(const std::vector<reports::EnvRow>& rows) {
  for (const auto& row : rows)
    std::printf("  %-26s %s\n", row.label.c_str(), reports::terminal_safe(row.value).c_str());
}

// Which forkcheck this is and where it found its parts (platform/install_layout.h): a ticket about
// an installed forkcheck needs to know which one ran; a part not found says where it looked.
nlohmann::json installation() {
  auto part = [](const PartLookup& lookup) {
    return lookup.found.empty()
               ? nlohmann::json{{"found", nullptr}, {"looked", lookup.looked_text()}}
               : nlohmann::json{{"found", lookup.found.string()}};
  };
#if defined(__APPLE__)
  const char* shim = "libforkcheck_watch.dylib";
#else
  const char* shim = "libforkcheck_watch.so";
#endif
  return {{"version", kVersion},
          {"executable", executable_path().string()},
          {"repro_programs", part(find_repro_dir())},
          {"watch_shim", part(find_watch_shim_file(shim))},
          {"report_schema", part(find_report_schema())}};
}

std::string part_text(const nlohmann::json& part) {
  return part["found"].is_string()
             ? part["found"].get<std::string>()
             : "not found (looked at " + part["looked"].get<std::string>() + ")";
}

}  // namespace

int print_environment(const EnvOptions& options) {
  TicketEnvironmentOptions ticket;
  ticket.python.python = options.python;
  ticket.python.named_by_user = options.python_named;
  ticket.python.timeout_s = options.timeout_s;
  ticket.timeout_s = options.timeout_s;
  nlohmann::json env = ticket_environment(ticket);
  env["forkcheck"] = installation();
  if (options.json) {
    std::cout << env.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return env.contains("error") ? exit_status::kError : exit_status::kOk;
  }

  // Short enough to paste into a ticket: one line per fact. The multi-line blocks (libraries
  // mapped, libtorch's parallel info and build settings) are in --json; the CPUs and variables
  // rows are the machine's, below, measured by forkcheck itself.
  const auto& self = env["forkcheck"];
  std::printf("forkcheck %s\n", self["version"].get<std::string>().c_str());
  print_rows({{"executable", self["executable"].get<std::string>()},
              {"repro programs", part_text(self["repro_programs"])},
              {"watch shim", part_text(self["watch_shim"])},
              {"report schema", part_text(self["report_schema"])}});
  std::printf("forkcheck environment\n");
  const auto facts = reports::read_as<reports::Environment>(env);
  std::vector<reports::EnvRow> rows;
  for (auto& row : reports::environment_rows(facts))
    if (!row.block && row.label != "CPUs" && row.label != "variables")
      rows.push_back(std::move(row));
  print_rows(rows);
  std::printf("Python\n");
  print_rows(reports::python_rows(facts));
  std::printf("Machine (measured by forkcheck)\n");
  print_rows(reports::machine_rows(facts));
  std::printf("Risks\n");
  if (facts.risks.empty()) std::printf("  none in what was measured\n");
  for (const auto& r : facts.risks) {
    std::printf("  ! %s\n", reports::terminal_safe(r.note).c_str());
    std::printf("    %s\n", reports::terminal_safe(reports::risk_why(r)).c_str());
  }
  std::printf(
      "(libraries mapped, libtorch's parallel info and build settings: forkcheck env --json)\n");
  std::fflush(stdout);
  return env.contains("error") ? exit_status::kError : exit_status::kOk;
}

}  // namespace fc::harness
