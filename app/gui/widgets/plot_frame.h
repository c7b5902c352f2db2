// PlotFrame: the frame of a small 2-D plot drawn with ImDrawList — background, grid, ticks with
// labels on both axes and the two axis titles — and the mapping from data to screen coordinates.
// The caller draws its marks inside the plot area afterwards.
//
// Contract:
//  - draw_plot_frame reserves `size` at the cursor as one item (an InvisibleButton named `id`, so
//    IsItemHovered/IsItemClicked refer to the plot) and returns the frame; a size component <= 0
//    takes the available region.
//  - Ticks come from plot_axes.h (nice steps); with integer_x only whole x values get ticks
//    (layers, positions). An empty range is widened so the mapping never divides by zero.
//  - The y title is written above the plot area at its left, the x title below the x labels.
//  - `x_label`, when given, names the x ticks (categories: "weights", "KV cache"; a layer axis
//    with a group of its own): it is asked for each tick value, and a tick it names "" is left
//    out. Category axes pass integer_x and put category i at x = i.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <imgui.h>

namespace mlens {

struct PlotRange {
    double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
};

struct PlotFrame {
    ImVec2 min{0, 0}, max{1, 1};  // plot area in screen coordinates
    PlotRange range;
    float x_of(double x) const;
    float y_of(double y) const;
    double x_at(float sx) const;
    bool contains(ImVec2 p) const { return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y; }
};

using TickLabel = std::function<std::string(double)>;

PlotFrame draw_plot_frame(const char* id, ImVec2 size, PlotRange range, const char* x_title, const char* y_title, bool integer_x,
                          const TickLabel& x_label = {});

// Colour of the series at `position` (a few distinct hues, then repeating).
ImU32 plot_series_color(size_t position);

}  // namespace mlens
