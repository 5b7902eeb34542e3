// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_svg.h: a self-contained SVG line chart with a logarithmic y axis, for `bloomery table --svg`.
//
// Each series is a curve (drawn as a line) and a set of points (drawn as dots) in one colour;
// values <= 0 cannot sit on a log axis and are left out (the caller says so in a note).
#ifndef BLOOMERY_TOOLS_CLI_SVG_H_
#define BLOOMERY_TOOLS_CLI_SVG_H_

#include <string>
#include <utility>
#include <vector>

namespace bloomery::cli {

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> curve;   // (x, y), drawn as a line
  std::vector<std::pair<double, double>> points;  // (x, y), drawn as dots
};

struct LogChart {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::string y_label;
  std::string curve_legend;   // what the lines mean, e.g. "theory"
  std::string points_legend;  // what the dots mean, e.g. "measured"
  double x_min = 0;
  double x_max = 1;
  double x_tick = 1;
  // Horizontal dashed reference line (e.g. the smallest measurable FPR); 0 for none.
  double reference_y = 0;
  std::string reference_label;
  std::vector<ChartSeries> series;
};

// The chart as a standalone SVG document. The y range spans whole decades around the data.
[[nodiscard]] std::string RenderLogChart(const LogChart& chart);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_SVG_H_
