// Tables and charts a case adds to its variant's details (details.tables, details.charts), so
// that every report format shows what the case measured without knowing the case: data (strings
// and numbers), never markup. reports/ renders them (report_view.h: detail_tables, detail_charts).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::detail_views {

// One row: its cells, in the table's column order (a string, a number, or null for "none"), and
// how the row ended where it stands for a process (ok, error, crash, hang, timeout; "" for none),
// which the formats colour.
nlohmann::json row(std::vector<nlohmann::json> cells, const std::string& status = "");

// Appends {title, columns, rows} to details["tables"].
void add_table(nlohmann::json& details, const std::string& title,
               const std::vector<std::string>& columns, std::vector<nlohmann::json> rows);

struct Series {
  std::string label;      // "worker 0"
  std::vector<double> y;  // y[i] is plotted at x = i
};
// Appends {title, x_label, y_label, series: [{label, y}]} to details["charts"]; a chart with no
// point in any series is not added.
void add_chart(nlohmann::json& details, const std::string& title, const std::string& x_label,
               const std::string& y_label, const std::vector<Series>& series);

}  // namespace fc::detail_views
