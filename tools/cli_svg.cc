// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The FPR charts of `table --svg` and `plan --svg` (cli_plan.h): FPR (log scale) against a linear
// x, drawn with cli_svg.h's page and primitives.
#include "cli_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"
#include "cli_plan.h"

namespace bloomery::cli {
namespace {

namespace chart {
using namespace svg;  // NOLINT: the drawing primitives

static_assert(std::size(kPalette) == kMaxHashes);

struct Axes {
  double decade_lo, decade_hi;
  double x_lo = 0, x_hi = kMaxBitsPerKey;  // linear
  [[nodiscard]] double X(double x) const {
    return kLeft + (x - x_lo) / (x_hi - x_lo) * (kRight - kLeft);
  }
  [[nodiscard]] double Y(double y) const {
    return kBottom - (std::log10(y) - decade_lo) / (decade_hi - decade_lo) * (kBottom - kTop);
  }
  [[nodiscard]] bool Visible(double y) const {
    return y > 0 && std::log10(y) >= decade_lo - 1e-9 && std::log10(y) <= decade_hi + 1e-9;
  }
};

// The frame every chart shares: the white page, a title and subtitle, the log-scale FPR axis's
// decades and the plot's border, with `y_label` and `x_label`.
std::string Frame(const Axes& axes, std::string_view title, std::string_view subtitle,
                  std::string_view x_label, std::string_view y_label) {
  std::string out = Page();
  const double middle = (kLeft + kRight) / 2;
  out += Text(middle, 32, R"(text-anchor="middle" font-size="20" font-weight="bold")", title);
  out += Text(middle, 56, R"(text-anchor="middle" font-size="14" fill="#444")", subtitle);
  for (int d = static_cast<int>(axes.decade_lo); d <= static_cast<int>(axes.decade_hi); ++d) {
    const double y = axes.Y(std::pow(10.0, d));
    out += Line(kLeft, y, kRight, y, R"(stroke="#cfcfcf")");
    out += Text(kLeft - 8, y + 5, R"(text-anchor="end")",
                d == 0 ? std::string("1")
                       : absl::StrCat(R"(10<tspan dy="-7" font-size="10">)", d, "</tspan>"));
  }
  out += absl::StrFormat(
      R"(<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#555"/>)"
      "\n",
      kLeft, kTop, kRight - kLeft, kBottom - kTop);
  out += Text(middle, 652, R"(text-anchor="middle" font-size="15")", x_label);
  out +=
      Text(30, 345, R"svg(text-anchor="middle" font-size="15" transform="rotate(-90 30 345)")svg",
           y_label);
  return out;
}

// An SVG path through the points of `curve` inside the plot, lifting the pen where it leaves it.
std::string Path(const Axes& axes, const std::vector<std::pair<double, double>>& curve,
                 std::string_view color) {
  std::string path;
  bool pen_down = false;
  for (const auto& [x, y] : curve) {
    pen_down = pen_down && axes.Visible(y);
    if (!axes.Visible(y)) continue;
    absl::StrAppendFormat(&path, "%c%.1f,%.1f ", pen_down ? 'L' : 'M', axes.X(x), axes.Y(y));
    pen_down = true;
  }
  return absl::StrFormat(R"(<path d="%s" fill="none" stroke="%s" stroke-width="2"/>)"
                         "\n",
                         path, color);
}

}  // namespace chart

}  // namespace

absl::StatusOr<std::string> RenderTableSvg(const Table& table) {
  const double resolution = 1.0 / static_cast<double>(table.keys);
  const uint32_t hashes = TableHashes(table.layout);
  std::vector<std::vector<std::pair<double, double>>> curves(hashes);
  double lo = resolution;
  double hi = resolution;
  for (uint32_t k = 1; k <= hashes; ++k) {
    for (double x = kMinBitsPerKey; x <= kMaxBitsPerKey + 1e-9; x += 0.25) {
      const auto bits = static_cast<uint64_t>(std::llround(x * static_cast<double>(table.keys)));
      absl::StatusOr<Plan> plan = PlanForSize(bits, k, table.keys, table.layout);
      if (!plan.ok()) return plan.status();
      curves[k - 1].emplace_back(x, plan->expected_fpr);
      if (plan->expected_fpr > 0) lo = std::min(lo, plan->expected_fpr);
      hi = std::max(hi, plan->expected_fpr);
    }
  }
  // Curves plunge fast at large x; past 12 decades below the top the chart would be all axis.
  const double top = std::ceil(std::log10(hi) - 1e-9);
  const chart::Axes axes{std::max(std::floor(std::log10(lo) + 1e-9), top - 12), top};
  std::string out = chart::Frame(
      axes,
      absl::StrCat("Bloom filter false-positive rate: ", TableLayoutName(table.layout), " layout"),
      absl::StrFormat("lines: exact formula; dots: measured with %s keys inserted and %s absent "
                      "keys queried",
                      FormatCount(table.keys), FormatCount(table.keys)),
      "bits per key (m/n)", "false-positive rate (log scale)");
  for (uint32_t x = 0; x <= kMaxBitsPerKey; x += 4) {
    out += svg::Line(axes.X(x), svg::kTop, axes.X(x), svg::kBottom, R"(stroke="#e4e4e4")");
    out += svg::Text(axes.X(x), svg::kBottom + 21, R"(text-anchor="middle")", absl::StrCat(x));
  }
  if (axes.Visible(resolution)) {
    const double y = axes.Y(resolution);
    out += svg::Line(svg::kLeft, y, svg::kRight, y, R"(stroke="#333" stroke-dasharray="6 4")");
    out += svg::Text(svg::kRight - 6, y - 6, R"(text-anchor="end" font-style="italic")",
                     "1 / queries: smallest measurable FPR");
  }
  // Curves leave a gap where they leave the plot; dots only for cells with false positives.
  for (uint32_t k = 1; k <= hashes; ++k) {
    out += chart::Path(axes, curves[k - 1], svg::kPalette[k - 1]);
    for (const Row& row : table.rows) {
      const double fpr = MeasuredFpr(row.cells[k - 1], table.keys);
      if (fpr > 0 && axes.Visible(fpr)) {
        out += svg::Dot(axes.X(row.bits_per_key), axes.Y(fpr), svg::kPalette[k - 1]);
      }
    }
    // The legend, right of the plot: the k's line and dot.
    const double y = svg::kTop + 8 + 22 * (k - 1);
    out += svg::Line(832, y, 860, y,
                     absl::StrFormat(R"(stroke="%s" stroke-width="2")", svg::kPalette[k - 1]));
    out += svg::Dot(846, y, svg::kPalette[k - 1]);
    out += svg::Text(870, y + 4.5, "", absl::StrCat("k = ", k));
  }
  const double legend = svg::kTop + 22 * hashes + 22;
  out += svg::Line(832, legend, 860, legend, R"(stroke="#333" stroke-width="2")");
  out += svg::Text(870, legend + 4.5, "", "predicted");
  out += svg::Dot(846, legend + 22, "#333");
  out += svg::Text(870, legend + 26.5, "", "measured");
  return out + "</svg>\n";
}

absl::StatusOr<std::string> RenderPlanSvg(const FilterOptions& request,
                                          const std::vector<Candidate>& candidates, int pick,
                                          uint64_t budget) {
  double bytes_lo = std::numeric_limits<double>::infinity();
  double bytes_hi = 0;
  for (const Candidate& c : candidates) {
    if (!c.plan) continue;
    bytes_lo = std::min(bytes_lo, static_cast<double>(c.plan->bytes()) / 4);
    bytes_hi = std::max(bytes_hi, static_cast<double>(c.plan->bytes()) * 2);
  }
  if (budget != 0) bytes_hi = std::max(bytes_hi, static_cast<double>(budget) * 1.25);
  constexpr int kSamples = 96;
  std::vector<std::vector<std::pair<double, double>>> curves(candidates.size());
  double lo = request.fpr > 0 ? request.fpr : 1.0;
  double hi = lo;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].plan) continue;
    for (int j = 0; j <= kSamples; ++j) {
      const double bytes = bytes_lo + (bytes_hi - bytes_lo) * j / kSamples;
      const auto bits = static_cast<uint64_t>(bytes * 8);
      absl::StatusOr<Plan> plan = PlanForSize(std::max<uint64_t>(bits, 1), request.hashes,
                                              request.capacity, candidates[i].plan->layout);
      if (!plan.ok() || !(plan->expected_fpr > 0)) continue;
      curves[i].emplace_back(static_cast<double>(plan->bytes()), plan->expected_fpr);
      lo = std::min(lo, plan->expected_fpr);
      hi = std::max(hi, plan->expected_fpr);
    }
  }
  const double top = std::min(0.0, std::ceil(std::log10(hi) - 1e-9));
  chart::Axes axes{std::max(std::floor(std::log10(lo) + 1e-9), top - 12), top};
  axes.x_lo = bytes_lo;
  axes.x_hi = bytes_hi;
  std::string out = chart::Frame(
      axes,
      absl::StrCat("Memory and false-positive rate for ", FormatCount(request.capacity), " keys"),
      absl::StrCat("lines: each candidate's exact FPR at its best k; dots: the planner's plans",
                   request.fpr > 0 ? absl::StrCat(" for ", FormatFpr(request.fpr)) : ""),
      "memory", "false-positive rate at capacity (log scale)");
  for (int t = 0; t <= 5; ++t) {
    const double bytes = bytes_lo + (bytes_hi - bytes_lo) * t / 5;
    out += svg::Line(axes.X(bytes), svg::kTop, axes.X(bytes), svg::kBottom, R"(stroke="#e4e4e4")");
    out +=
        svg::Text(axes.X(bytes), svg::kBottom + 21, R"(text-anchor="middle")", FormatBytes(bytes));
  }
  if (request.fpr > 0 && axes.Visible(request.fpr)) {
    const double y = axes.Y(request.fpr);
    out += svg::Line(svg::kLeft, y, svg::kRight, y, R"(stroke="#333" stroke-dasharray="6 4")");
    out += svg::Text(svg::kRight - 6, y - 6, R"(text-anchor="end" font-style="italic")",
                     absl::StrCat("target ", FormatFpr(request.fpr)));
  }
  if (budget != 0) {
    const double x = axes.X(static_cast<double>(budget));
    out += svg::Line(x, svg::kTop, x, svg::kBottom, R"(stroke="#b00" stroke-dasharray="6 4")");
    out += svg::Text(x - 6, svg::kTop + 16, R"(text-anchor="end" font-style="italic" fill="#b00")",
                     absl::StrCat("budget ", FormatBytes(static_cast<double>(budget))));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.plan) continue;
    const char* color = svg::kPalette[i];
    out += chart::Path(axes, curves[i], color);
    const double x = axes.X(static_cast<double>(c.plan->bytes()));
    if (axes.Visible(c.plan->expected_fpr)) {
      out += svg::Dot(x, axes.Y(c.plan->expected_fpr), color);
      if (static_cast<int>(i) == pick) {
        out += absl::StrFormat(
            R"(<circle cx="%.1f" cy="%.1f" r="9" fill="none" stroke="#000" stroke-width="2"/>)"
            "\n",
            x, axes.Y(c.plan->expected_fpr));
      }
    }
    const double y = svg::kTop + 8 + 22 * static_cast<double>(i);
    out += svg::Line(832, y, 860, y, absl::StrFormat(R"(stroke="%s" stroke-width="2")", color));
    out += svg::Dot(846, y, color);
    out += svg::Text(870, y + 4.5, "", c.name);
  }
  const double legend = svg::kTop + 22 * static_cast<double>(candidates.size()) + 14;
  out += absl::StrFormat(
      R"(<circle cx="846" cy="%.1f" r="9" fill="none" stroke="#000" stroke-width="2"/>)"
      "\n",
      legend);
  out += svg::Text(870, legend + 4.5, "", pick >= 0 ? "the pick" : "(none fits)");
  return out + "</svg>\n";
}

}  // namespace bloomery::cli
