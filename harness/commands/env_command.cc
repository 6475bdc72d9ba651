#include "harness/commands/env_command.h"

#include <cstdio>
#include <iostream>

#include "harness/common/environment_probe.h"
#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::harness {

int print_environment(bool as_json) {
  const nlohmann::json env = collect_environment();
  if (as_json) {
    std::cout << env.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "forkcheck environment\n";
    // The values come from a repro program and the system it asked (library, device names):
    // escaped for the terminal.
    for (const auto& row : reports::environment_rows(env)) {
      const std::string value = reports::terminal_safe(row.value);
      if (!row.block) {
        std::printf("  %-26s %s\n", row.label.c_str(), value.c_str());
        continue;
      }
      std::printf("  %s:\n", row.label.c_str());
      size_t start = 0;
      while (start < value.size()) {
        size_t end = value.find('\n', start);
        if (end == std::string::npos) end = value.size();
        std::printf("      %s\n", value.substr(start, end - start).c_str());
        start = end + 1;
      }
    }
    std::fflush(stdout);
  }
  return env.contains("error") ? 1 : 0;
}

}  // namespace fc::harness
