// A line chart as inline SVG (no script, no external resource): a few series over a shared x
// axis, with axes, grid, tick labels and a legend. Used for the workers' loss curves in the HTML.
#pragma once

#include <string>
#include <vector>

namespace fc::reports {

struct ChartSeries {
  std::string label;      // "worker 0"
  std::vector<double> y;  // y[i] is plotted at x = i
};

struct ChartText {
  std::string title;    // for screen readers (<title>) and the caption
  std::string x_label;  // "step"
  std::string y_label;  // "loss"
};

// One <svg> element; each series is one <polyline> (a <circle> when it has a single point).
std::string svg_line_chart(const std::vector<ChartSeries>& series, const ChartText& text);

}  // namespace fc::reports
