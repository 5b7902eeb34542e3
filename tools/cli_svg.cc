// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "cli_svg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bloomery::cli {
namespace {

// matplotlib's "tab10": distinguishable, and dark enough on white.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

constexpr double kWidth = 1000;
constexpr double kHeight = 680;
constexpr double kLeft = 100;
constexpr double kTop = 86;
constexpr double kRight = kWidth - 190;
constexpr double kBottom = kHeight - 76;

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c == '&'   ? "&amp;"
           : c == '<' ? "&lt;"
           : c == '>' ? "&gt;"
           : c == '"' ? "&quot;"
                      : std::string(1, c);
  }
  return out;
}

struct Axes {
  double x_min, x_max, decade_lo, decade_hi;
  [[nodiscard]] double X(double x) const {
    return kLeft + (x - x_min) / (x_max - x_min) * (kRight - kLeft);
  }
  [[nodiscard]] double Y(double y) const {
    return kBottom - (std::log10(y) - decade_lo) / (decade_hi - decade_lo) * (kBottom - kTop);
  }
  [[nodiscard]] bool Visible(double y) const {
    return y > 0 && std::log10(y) >= decade_lo - 1e-9 && std::log10(y) <= decade_hi + 1e-9;
  }
};

Axes ChooseAxes(const LogChart& chart) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  auto see = [&](double y) {
    if (y > 0 && std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  };
  for (const ChartSeries& s : chart.series) {
    for (const auto& [x, y] : s.curve) see(y);
    for (const auto& [x, y] : s.points) see(y);
  }
  see(chart.reference_y);
  if (!std::isfinite(lo)) lo = 1e-3, hi = 1;
  double decade_hi = std::ceil(std::log10(hi) - 1e-9);
  // Curves plunge fast at large x; past 12 decades below the top the chart would be all axis.
  double decade_lo = std::max(std::floor(std::log10(lo) + 1e-9), decade_hi - 12);
  if (decade_lo >= decade_hi) decade_lo = decade_hi - 1;
  return Axes{chart.x_min, chart.x_max, decade_lo, decade_hi};
}

std::string PowerOfTen(int exponent, double x, double y, std::string_view anchor) {
  if (exponent == 0) {
    return absl::StrFormat(R"(<text x="%.1f" y="%.1f" text-anchor="%s" class="tick">1</text>)", x,
                           y, anchor);
  }
  return absl::StrFormat(
      R"(<text x="%.1f" y="%.1f" text-anchor="%s" class="tick">10<tspan dy="-7" font-size="10">%d</tspan></text>)",
      x, y, anchor, exponent);
}

}  // namespace

std::string RenderLogChart(const LogChart& chart) {
  const Axes axes = ChooseAxes(chart);
  std::string svg = absl::StrFormat(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">
<style>
  .tick { font-size: 13px; fill: #333; }
  .label { font-size: 15px; fill: #111; }
  .legend { font-size: 13px; fill: #111; }
</style>
<rect width="100%%" height="100%%" fill="white"/>
)",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppendFormat(
      &svg,
      R"(<text x="%.1f" y="32" text-anchor="middle" font-size="20" font-weight="bold">%s</text>
)",
      (kLeft + kRight) / 2, XmlEscape(chart.title));
  absl::StrAppendFormat(
      &svg, R"(<text x="%.1f" y="56" text-anchor="middle" font-size="14" fill="#444">%s</text>
)",
      (kLeft + kRight) / 2, XmlEscape(chart.subtitle));

  // Grid: every decade (solid) and its 2..9 multiples (faint), every x tick.
  svg += R"(<g stroke-width="1">)";
  svg += '\n';
  for (int d = static_cast<int>(axes.decade_lo); d <= static_cast<int>(axes.decade_hi); ++d) {
    const double y = axes.Y(std::pow(10.0, d));
    absl::StrAppendFormat(&svg,
                          R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#cfcfcf"/>)",
                          kLeft, y, kRight, y);
    svg += PowerOfTen(d, kLeft - 8, y + 5, "end");
    svg += '\n';
    if (d == static_cast<int>(axes.decade_hi)) break;
    for (int m = 2; m <= 9; ++m) {
      const double ym = axes.Y(m * std::pow(10.0, d));
      absl::StrAppendFormat(&svg,
                            R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f0f0f0"/>)"
                            R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555"/>)"
                            "\n",
                            kLeft, ym, kRight, ym, kLeft, ym, kLeft + 4, ym);
    }
  }
  for (double x = chart.x_min; x <= chart.x_max + 1e-9; x += chart.x_tick) {
    const double px = axes.X(x);
    absl::StrAppendFormat(&svg,
                          R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>)"
                          R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555"/>)"
                          R"(<text x="%.1f" y="%.1f" text-anchor="middle" class="tick">%g</text>)"
                          "\n",
                          px, kTop, px, kBottom, px, kBottom, px, kBottom + 5, px, kBottom + 21, x);
  }
  svg += "</g>\n";
  absl::StrAppendFormat(
      &svg,
      R"(<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#555"/>
)",
      kLeft, kTop, kRight - kLeft, kBottom - kTop);
  absl::StrAppendFormat(&svg,
                        R"(<text x="%.1f" y="%.1f" text-anchor="middle" class="label">%s</text>
)",
                        (kLeft + kRight) / 2, kHeight - 28, XmlEscape(chart.x_label));
  absl::StrAppendFormat(
      &svg,
      R"svg(<text x="30" y="%.1f" text-anchor="middle" class="label" transform="rotate(-90 30 %.1f)">%s</text>
)svg",
      (kTop + kBottom) / 2, (kTop + kBottom) / 2, XmlEscape(chart.y_label));

  if (chart.reference_y > 0 && axes.Visible(chart.reference_y)) {
    const double y = axes.Y(chart.reference_y);
    absl::StrAppendFormat(
        &svg,
        R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333" stroke-width="1.2" stroke-dasharray="6 4"/>)"
        R"(<text x="%.1f" y="%.1f" text-anchor="end" class="tick" font-style="italic">%s</text>)"
        "\n",
        kLeft, y, kRight, y, kRight - 6, y - 6, XmlEscape(chart.reference_label));
  }

  // Series: curves clipped to the plot (a gap where they leave it), then dots on top.
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const char* color = kPalette[i % std::size(kPalette)];
    std::string path;
    bool pen_down = false;
    for (const auto& [x, y] : s.curve) {
      if (!axes.Visible(y) || x < chart.x_min || x > chart.x_max) {
        pen_down = false;
        continue;
      }
      absl::StrAppendFormat(&path, "%c%.1f,%.1f ", pen_down ? 'L' : 'M', axes.X(x), axes.Y(y));
      pen_down = true;
    }
    if (!path.empty()) {
      absl::StrAppendFormat(
          &svg,
          R"(<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>
)",
          path, color);
    }
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const char* color = kPalette[i % std::size(kPalette)];
    for (const auto& [x, y] : chart.series[i].points) {
      if (!axes.Visible(y) || x < chart.x_min || x > chart.x_max) continue;
      absl::StrAppendFormat(
          &svg,
          R"(<circle cx="%.1f" cy="%.1f" r="3.6" fill="%s" stroke="white" stroke-width="0.8"/>
)",
          axes.X(x), axes.Y(y), color);
    }
  }

  // Legend, right of the plot: a line sample (or a dot) and its label per entry.
  const double lx = kRight + 22;
  double ly = kTop + 8;
  auto entry = [&](std::string_view sample, std::string_view label, bool newline) {
    absl::StrAppendFormat(&svg, R"(%s<text x="%.1f" y="%.1f" class="legend">%s</text>%s)", sample,
                          lx + 38, ly + 4.5, XmlEscape(label), newline ? "\n" : "");
  };
  auto line = [&](std::string_view style) {
    return absl::StrFormat(R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>)", lx, ly, lx + 28,
                           ly, style);
  };
  auto dot = [&](std::string_view color) {
    return absl::StrFormat(R"(<circle cx="%.1f" cy="%.1f" r="3.6" fill="%s"/>)", lx + 14, ly,
                           color);
  };
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const char* color = kPalette[i % std::size(kPalette)];
    entry(line(absl::StrFormat(R"(stroke="%s" stroke-width="2")", color)), chart.series[i].label,
          false);
    if (!chart.points_legend.empty()) svg += dot(color);
    svg += '\n';
    ly += 22;
  }
  ly += 14;
  entry(line(R"(stroke="#333" stroke-width="2")"), chart.curve_legend, true);
  ly += 22;
  if (!chart.points_legend.empty()) entry(dot("#333"), chart.points_legend, true);
  if (chart.reference_y > 0) {
    ly += 22;
    entry(line(R"(stroke="#333" stroke-width="1.2" stroke-dasharray="6 4")"), "resolution", true);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace bloomery::cli
