#include "bench/serve/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"

namespace kairo::bench::serve {
namespace {

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 1000) return strprintf("%.0f", v);
  if (std::fabs(v) >= 10) return strprintf("%g", std::round(v * 10) / 10);
  return strprintf("%g", std::round(v * 1000) / 1000);
}

struct Panel {
  double x0, y0, w, h;  // plot area in pixels
};

std::string draw_panel(const Panel& p, const std::vector<LevelMetrics>& levels, double (*y_of)(const LevelMetrics&),
                       const char* y_title, const char* color) {
  double x_max = 0, y_max = 0;
  for (const auto& m : levels) {
    x_max = std::max(x_max, m.output_throughput);
    y_max = std::max(y_max, y_of(m));
  }
  const std::vector<double> xt = nice_ticks(0, x_max > 0 ? x_max : 1, 5);
  const std::vector<double> yt = nice_ticks(0, y_max > 0 ? y_max : 1, 5);
  const double xs = xt.back(), ys = yt.back();
  auto px = [&](double x) { return p.x0 + x / xs * p.w; };
  auto py = [&](double y) { return p.y0 + p.h - y / ys * p.h; };
  std::string s;
  for (double x : xt) {
    s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", px(x), p.y0, px(x),
                   p.y0 + p.h);
    s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%s</text>\n", px(x),
                   p.y0 + p.h + 15, tick_label(x).c_str());
  }
  for (double y : yt) {
    s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", p.x0, py(y),
                   p.x0 + p.w, py(y));
    s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", p.x0 - 5,
                   py(y) + 4, tick_label(y).c_str());
  }
  // The frame goes over the grid lines.
  s += strprintf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", p.x0,
                 p.y0, p.w, p.h);
  s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">output tokens/s</text>\n",
                 p.x0 + p.w / 2, p.y0 + p.h + 34);
  s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 %.1f "
                 "%.1f)\">%s</text>\n",
                 p.x0 - 48, p.y0 + p.h / 2, p.x0 - 48, p.y0 + p.h / 2, y_title);
  std::string points;
  for (const auto& m : levels) points += strprintf("%.1f,%.1f ", px(m.output_throughput), py(y_of(m)));
  if (levels.size() > 1) {
    s += strprintf("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", points.c_str(),
                   color);
  }
  for (const auto& m : levels) {
    s += strprintf("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: %.1f tok/s, %.1f ms</title>"
                   "</circle>\n",
                   px(m.output_throughput), py(y_of(m)), color, escape_xml(m.label).c_str(), m.output_throughput,
                   y_of(m));
    s += strprintf("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#333\">%s</text>\n", px(m.output_throughput) + 6,
                   py(y_of(m)) - 6, escape_xml(m.label).c_str());
  }
  return s;
}

double p99_ttft(const LevelMetrics& m) { return m.ttft_ms.p99; }
double p99_tpot(const LevelMetrics& m) { return m.tpot_ms.p99; }

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    step = f * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step) * step;
  for (int i = 0;; ++i) {
    const double t = first + i * step;
    ticks.push_back(t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string svg_plot(const std::vector<LevelMetrics>& levels, const std::string& title) {
  const double width = 980, height = 440;
  std::string s = strprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 "
                            "%.0f %.0f\" font-family=\"sans-serif\">\n",
                            width, height, width, height);
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += strprintf("<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", width / 2,
                 escape_xml(title).c_str());
  s += draw_panel({80, 50, 380, 320}, levels, p99_ttft, "p99 TTFT (ms)", "#1f77b4");
  s += draw_panel({570, 50, 380, 320}, levels, p99_tpot, "p99 TPOT (ms)", "#d62728");
  s += "</svg>\n";
  return s;
}

}  // namespace kairo::bench::serve
