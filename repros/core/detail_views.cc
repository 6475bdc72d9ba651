#include "core/detail_views.h"

#include <utility>

namespace fc::detail_views {

nlohmann::json row(std::vector<nlohmann::json> cells, const std::string& status) {
  nlohmann::json r = {{"cells", std::move(cells)}};
  if (!status.empty()) r["status"] = status;
  return r;
}

void add_table(nlohmann::json& details, const std::string& title,
               const std::vector<std::string>& columns, std::vector<nlohmann::json> rows) {
  details["tables"].push_back({{"title", title}, {"columns", columns}, {"rows", std::move(rows)}});
}

void add_chart(nlohmann::json& details, const std::string& title, const std::string& x_label,
               const std::string& y_label, const std::vector<Series>& series) {
  nlohmann::json s = nlohmann::json::array();
  for (const auto& one : series)
    if (!one.y.empty()) s.push_back({{"label", one.label}, {"y", one.y}});
  if (s.empty()) return;
  details["charts"].push_back(
      {{"title", title}, {"x_label", x_label}, {"y_label", y_label}, {"series", std::move(s)}});
}

}  // namespace fc::detail_views
