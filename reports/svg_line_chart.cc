#include "reports/svg_line_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "reports/text.h"

namespace fc::reports {
namespace {

// Okabe-Ito: distinguishable with the common colour-vision deficiencies, and in greyscale print
// the dash patterns below tell the series apart.
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                "#D55E00", "#56B4E9", "#000000"};
const char* const kDashes[] = {"", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 4"};
constexpr int kW = 560, kH = 280, kLeft = 56, kRight = 112, kTop = 14, kBottom = 40;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_label(double v, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step))));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A "nice" step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over `range`.
double nice_step(double range, int ticks) {
  const double raw = range / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

std::string svg_line_chart(const std::vector<ChartSeries>& series, const ChartText& text) {
  size_t n = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series) {
    n = std::max(n, s.y.size());
    for (double v : s.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12) lo -= 0.5, hi += 0.5;
  const double ystep = nice_step(hi - lo, 4);
  lo = std::floor(lo / ystep) * ystep;
  hi = std::ceil(hi / ystep) * ystep;
  const double xmax = n > 1 ? static_cast<double>(n - 1) : 1.0;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) { return kLeft + x / xmax * pw; };
  auto py = [&](double y) { return kTop + (hi - y) / (hi - lo) * ph; };

  std::string o;
  o += "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(kW) + " " + std::to_string(kH) +
       "\" role=\"img\" aria-label=\"" + html_escape(text.title) + "\">";
  o += "<title>" + html_escape(text.title) + "</title>";
  // grid and y ticks
  for (double y = lo; y <= hi + ystep / 2; y += ystep) {
    o += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + pw) + "\" y1=\"" +
         num(py(y)) + "\" y2=\"" + num(py(y)) + "\"/>";
    o += "<text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) +
         "\" text-anchor=\"end\">" + tick_label(y, ystep) + "</text>";
  }
  const double xstep = n > 1 ? std::max(1.0, nice_step(xmax, 5)) : 1.0;
  for (double x = 0; x <= xmax + 1e-9; x += xstep)
    o += "<text class=\"tick\" x=\"" + num(px(x)) + "\" y=\"" + num(kTop + ph + 16) +
         "\" text-anchor=\"middle\">" + tick_label(x, 1) + "</text>";
  o += "<line class=\"axis\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft) + "\" y1=\"" +
       num(kTop) + "\" y2=\"" + num(kTop + ph) + "\"/>";
  o += "<line class=\"axis\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + pw) + "\" y1=\"" +
       num(kTop + ph) + "\" y2=\"" + num(kTop + ph) + "\"/>";
  o += "<text class=\"axis-label\" x=\"" + num(kLeft + pw / 2) + "\" y=\"" + num(kH - 6) +
       "\" text-anchor=\"middle\">" + html_escape(text.x_label) + "</text>";
  o += "<text class=\"axis-label\" transform=\"translate(14 " + num(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(text.y_label) + "</text>";
  // series, then the legend on the right
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    const char* colour = kColours[i % std::size(kColours)];
    const char* dash = kDashes[i % std::size(kDashes)];
    const std::string style =
        std::string("stroke:") + colour + (*dash ? std::string(";stroke-dasharray:") + dash : "");
    if (s.y.size() == 1) {
      o += "<circle class=\"series\" cx=\"" + num(px(0)) + "\" cy=\"" + num(py(s.y[0])) +
           "\" r=\"3\" style=\"fill:" + colour + "\"><title>" + html_escape(s.label) +
           "</title></circle>";
    } else if (!s.y.empty()) {
      std::string points;
      for (size_t x = 0; x < s.y.size(); ++x)
        if (std::isfinite(s.y[x]))
          points += num(px(static_cast<double>(x))) + "," + num(py(s.y[x])) + " ";
      if (!points.empty()) points.pop_back();
      o += "<polyline class=\"series\" points=\"" + points + "\" style=\"" + style + "\"><title>" +
           html_escape(s.label) + "</title></polyline>";
    }
    const double ly = kTop + 10 + static_cast<double>(i) * 18;
    o += "<line x1=\"" + num(kLeft + pw + 12) + "\" x2=\"" + num(kLeft + pw + 36) + "\" y1=\"" +
         num(ly) + "\" y2=\"" + num(ly) + "\" class=\"legend-line\" style=\"" + style + "\"/>";
    o += "<text class=\"legend\" x=\"" + num(kLeft + pw + 42) + "\" y=\"" + num(ly + 4) + "\">" +
         html_escape(s.label) + "</text>";
  }
  o += "</svg>";
  return o;
}

}  // namespace fc::reports
