// HistogramPlot: a histogram widget drawn with ImDrawList, fed bin data by the caller.
//
// Contract:
//  - Policy-free: the caller owns the data (one or more series of equal-width bins over their own
//    [lo, hi]) and decides what a zoom means (e.g. re-binning the zoomed range); the widget only
//    keeps its view state (log scale, the visible value range) between frames.
//  - The first series is drawn as filled bars, the others as outlined steps on top, each in its
//    own colour, with a legend when there are two or more labelled series.
//  - Axes: value ticks below (nice steps), count ticks on the left (linear, or powers of ten in
//    log mode: height ∝ log10(1 + count)); the count axis fits the bins inside the view. Axis
//    titles: `x_title` under the value labels, "count" or "count (log)" above the count labels.
//  - Values outside the first series' range (its below/above) are drawn as two striped end bins
//    left and right of the plot area, on the same count axis, each with its count written above,
//    and "outside the range" joins the legend; hovering one names its count.
//  - Mouse: hovering shows a tooltip with each series' bin under the cursor (range, count and its
//    share of the series total); dragging horizontally selects a range and zooms to it (draw()
//    returns `zoomed`); double-click, or "Reset zoom" in the right-click menu, returns to the whole
//    data range (`reset`). The menu also toggles the log scale.
//  - Geometry of the last frame (plot_rect, x_of, value_at) is exposed so callers and tests can
//    address bins by value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

namespace mlens {

struct HistogramSeries {
    std::string label;  // display-safe text for the legend and tooltip
    double lo = 0, hi = 0;  // bins cover [lo, hi] in equal steps
    std::vector<uint64_t> counts;
    uint64_t total = 0;  // denominator of the share in the tooltip; 0: the sum of counts
    uint64_t below = 0, above = 0;  // values outside [lo, hi] (drawn for the first series)
    ImU32 color = 0;  // 0: the widget's colour for the series' position

    double bin_width() const { return counts.empty() ? 0 : (hi - lo) / static_cast<double>(counts.size()); }
    // Bin holding `value`, or nullopt outside [lo, hi] (hi itself belongs to the last bin).
    std::optional<size_t> bin_of(double value) const;
    uint64_t share_total() const;
};

struct ValueRange {
    double lo = 0, hi = 0;
    bool operator==(const ValueRange&) const = default;
};

struct HistogramHover {
    size_t series = 0;
    size_t bin = 0;
    double lo = 0, hi = 0;
    uint64_t count = 0;
    double share = 0;  // count / series total, in [0, 1]
};

class HistogramPlot {
public:
    enum class Event { none, zoomed, reset };

    Event draw(const char* id, const std::vector<HistogramSeries>& series, ImVec2 size);

    bool log_scale = false;
    std::string x_title = "value";
    const std::optional<ValueRange>& view() const { return m_view; }
    void set_view(std::optional<ValueRange> view) { m_view = view; }
    // The bins under the cursor in the last frame, one per series that has one there.
    const std::vector<HistogramHover>& hover() const { return m_hover; }
    // The value range drawn in the last frame.
    ValueRange shown_range() const { return m_shown; }
    // The whole widget (axes and labels included) and the plot area, in screen coordinates.
    ImVec2 frame_min() const { return m_frame_min; }
    ImVec2 frame_max() const { return m_frame_max; }
    ImVec2 plot_min() const { return m_plot_min; }
    ImVec2 plot_max() const { return m_plot_max; }
    float x_of(double value) const;
    double value_at(float x) const;

private:
    void draw_axes(ImDrawList* dl, double max_count) const;
    void draw_series(ImDrawList* dl, const std::vector<HistogramSeries>& series, double max_count) const;
    void draw_legend(ImDrawList* dl, const std::vector<HistogramSeries>& series) const;
    void draw_end_bins(ImDrawList* dl, const HistogramSeries& first, double max_count);
    void update_hover(const std::vector<HistogramSeries>& series);
    float y_of(double count, double max_count) const;

    std::optional<ValueRange> m_view;
    std::vector<HistogramHover> m_hover;
    ValueRange m_shown;
    ImVec2 m_plot_min{0, 0}, m_plot_max{1, 1};
    ImVec2 m_frame_min{0, 0}, m_frame_max{1, 1};
    float m_end_bin_room = 0;  // width taken by each end bin and its gap, 0: none
    std::optional<float> m_drag_from;
};

// Colour of the series at `position` when it has none of its own.
ImU32 series_color(size_t position);
// Colour of the end bins: values outside the range.
ImU32 outside_color();

}  // namespace mlens
