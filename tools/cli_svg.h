// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_svg.h: the drawing the CLI's charts share (table --svg, plan --svg, bench --svg): a page of
// 1000 x 680 with the plot at [kLeft, kRight] x [kTop, kBottom], text, lines, dots and bars, and
// one palette. cli_svg.cc draws table's and plan's FPR charts with them (cli_plan.h); bench's bars
// are cli_bench.cc's.
#ifndef BLOOMERY_TOOLS_CLI_SVG_H_
#define BLOOMERY_TOOLS_CLI_SVG_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace bloomery::cli::svg {

// One colour per series, up to 16 (matplotlib's tab10, then six more of tab20's): distinguishable,
// and dark enough on white.
inline constexpr const char* kPalette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94"};
inline constexpr double kLeft = 100, kTop = 86, kRight = 810, kBottom = 604;

// The page: an opening <svg> of 1000 x 680 on white (close it with "</svg>\n").
inline std::string Page() {
  return R"(<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="680" viewBox="0 0 1000 680" font-family="Helvetica, Arial, sans-serif" font-size="13">
<rect width="100%" height="100%" fill="white"/>
)";
}

inline std::string Text(double x, double y, std::string_view attributes, std::string_view text) {
  return absl::StrFormat(R"(<text x="%.1f" y="%.1f" %s>%s</text>)"
                         "\n",
                         x, y, attributes, text);
}

inline std::string Line(double x1, double y1, double x2, double y2, std::string_view style) {
  return absl::StrFormat(R"(<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>)"
                         "\n",
                         x1, y1, x2, y2, style);
}

inline std::string Dot(double x, double y, std::string_view color) {
  return absl::StrFormat(R"(<circle cx="%.1f" cy="%.1f" r="3.6" fill="%s"/>)"
                         "\n",
                         x, y, color);
}

inline std::string Bar(double x, double y, double width, double height, std::string_view color) {
  return absl::StrFormat(R"(<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>)"
                         "\n",
                         x, y, width, height, color);
}

}  // namespace bloomery::cli::svg

#endif  // BLOOMERY_TOOLS_CLI_SVG_H_
