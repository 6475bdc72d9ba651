#include "harness/common/catalog.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness/common/install_layout.h"
#include "harness/platform/zygote.h"
#include "harness/supervise/supervisor.h"
#include "reports/text.h"

namespace fc::harness {

std::vector<std::string> repro_programs() {
  const PartLookup lookup = find_repro_dir();
  // Not found anywhere: the installed place, so that the error names where it should be.
  const std::filesystem::path dir = lookup.found.empty() ? lookup.looked.back() : lookup.found;
  return {(dir / "forkcheck-repro").string(), (dir / "forkcheck-repro-torch").string()};
}

Catalog load_catalog(const std::vector<std::string>& programs, Zygotes* zygotes) {
  Catalog cat;
  for (const auto& program : programs) {
    const auto t0 = std::chrono::steady_clock::now();
    LaunchSpec spec;
    spec.argv = {program, "--list"};
    if (zygotes) spec.zygote = zygotes->for_program(program);
    spec.timeout_s = 60;
    spec.channel = false;
    spec.capture_cap = 8u << 20;
    ChildResult r = supervise(spec);
    cat.load_s[program] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.started || !r.exit.exited_ok() || r.out.truncated()) {
      cat.errors.push_back(program + " --list: " +
                           (r.started ? r.exit.describe() + " " + r.err.last_lines(2) : r.start_error));
      continue;
    }
    auto j = nlohmann::json::parse(r.out.text(), nullptr, false);
    if (j.is_discarded() || !j.contains("cases")) {
      cat.errors.push_back(program + " --list: its output is not a catalog");
      continue;
    }
    for (auto& c : j["cases"]) cat.cases.push_back(std::move(c));
  }
  return cat;
}

Catalog load_catalog_reporting_errors(Zygotes* zygotes) {
  Catalog cat = load_catalog(repro_programs(), zygotes);
  // An error may quote a repro program's stderr: shown with its control bytes escaped.
  for (const auto& e : cat.errors) std::cerr << "forkcheck: " << reports::terminal_safe(e) << "\n";
  return cat;
}

}  // namespace fc::harness
