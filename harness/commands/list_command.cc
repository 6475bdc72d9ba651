#include "harness/commands/list_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "harness/common/catalog.h"
#include "harness/common/exit_status_codes.h"

namespace fc::harness {

int list_cases(bool as_json) {
  Catalog cat = load_catalog_reporting_errors();
  if (as_json) {
    const nlohmann::json out = {{"cases", cat.cases}, {"errors", cat.errors}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return cat.errors.empty() ? exit_status::kOk : exit_status::kError;
  }
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
  return cat.errors.empty() ? exit_status::kOk : exit_status::kError;
}

}  // namespace fc::harness
