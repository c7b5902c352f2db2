#include "histogram_png.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "plot_axes.h"
#include "png_canvas.h"

namespace mlens::cli {

namespace {

constexpr int kWidth = 900, kHeight = 420;
constexpr double kLeft = 84, kRight = 24, kTop = 58, kBottom = 62;
constexpr double kEndBinWidth = 16, kEndBinGap = 10;
constexpr double kLabelPx = 13, kTitlePx = 16;
constexpr Rgb kInk{40, 40, 40}, kMuted{110, 110, 110}, kGrid{228, 228, 228}, kBar{66, 118, 190}, kOutside{214, 120, 36};

// Height of a count as a fraction of the axis: linear over [0, top], or log10 over [1, top].
struct CountAxis {
    bool log = false;
    double top = 1;
    double fraction(uint64_t n) const {
        if (n == 0) return 0;
        return log ? std::log10(static_cast<double>(n)) / std::log10(top) : static_cast<double>(n) / top;
    }
};

// A count tick's label: "800", "3k", "2.5k", "100k", "1M" (three significant digits at most).
std::string count_tick_label(double count) {
    static const char* const kUnits[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t unit = 0;
    while (count >= 1000 && unit + 1 < std::size(kUnits)) {
        count /= 1000;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g%s", count, kUnits[unit]);
    return buf;
}

struct Layout {
    double plot_left, plot_right, plot_top, plot_bottom;  // the bins' area
    double height() const { return plot_bottom - plot_top; }
    double x_of(double v, double lo, double hi) const { return plot_left + (v - lo) / (hi - lo) * (plot_right - plot_left); }
};

void draw_count_axis(PngCanvas& c, const TextFace& face, const Layout& l, const CountAxis& axis, double axis_left, double axis_right) {
    auto y_of = [&](double fraction) { return l.plot_bottom - fraction * l.height(); };
    if (axis.log) {
        for (uint64_t decade : decade_ticks(static_cast<uint64_t>(axis.top))) {
            const double y = std::round(y_of(axis.fraction(decade)));
            c.fill(axis_left, y, axis_right, y + 1, kGrid);
            c.fill(axis_left - 6, y, axis_left, y + 1, kInk);
            // Minor ticks at 2..9 x the decade, where the axis goes on.
            for (int m = 2; m <= 9 && decade * m < axis.top; ++m) {
                const double ym = std::round(y_of(axis.fraction(decade * m)));
                c.fill(axis_left - 3, ym, axis_left, ym + 1, kInk);
            }
            const std::string label = count_tick_label(static_cast<double>(decade));
            c.text(face, kLabelPx, axis_left - 9 - face.width(label, kLabelPx), y + face.ascent(kLabelPx) / 2, label, kInk);
        }
        return;
    }
    const std::vector<double> ticks = nice_ticks(0, axis.top, 5);
    for (double t : ticks) {
        const double y = std::round(y_of(t / axis.top));
        c.fill(axis_left, y, axis_right, y + 1, kGrid);
        c.fill(axis_left - 6, y, axis_left, y + 1, kInk);
        const std::string label = count_tick_label(t);
        c.text(face, kLabelPx, axis_left - 9 - face.width(label, kLabelPx), y + face.ascent(kLabelPx) / 2, label, kInk);
    }
}

void draw_value_axis(PngCanvas& c, const TextFace& face, const Layout& l, double lo, double hi) {
    const std::vector<double> ticks = nice_ticks(lo, hi, 8);
    const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : hi - lo;
    for (double t : ticks) {
        const double x = std::round(l.x_of(t, lo, hi));
        c.fill(x, l.plot_bottom, x + 1, l.plot_bottom + 6, kInk);
        const std::string label = tick_label(t, step);
        c.text(face, kLabelPx, x - face.width(label, kLabelPx) / 2, l.plot_bottom + 8 + face.ascent(kLabelPx), label, kInk);
    }
}

// A marked end bin for the values outside the range, its count written above it.
void draw_end_bin(PngCanvas& c, const TextFace& face, const Layout& l, const CountAxis& axis, double left, uint64_t n,
                  const std::string& name) {
    const double top = l.plot_bottom - std::max(axis.fraction(n) * l.height(), n > 0 ? 2.0 : 0.0);
    // Stripes tell the end bin from the bins of the range even where the colours are not seen.
    for (double y = top; y < l.plot_bottom; y += 4) c.fill(left, y, left + kEndBinWidth, std::min(y + 3, l.plot_bottom), kOutside);
    const std::string count = count_tick_label(static_cast<double>(n));
    c.text(face, kLabelPx, left + kEndBinWidth / 2 - face.width(count, kLabelPx) / 2, top - 4, count, kOutside);
    c.text(face, kLabelPx, left + kEndBinWidth / 2 - face.width(name, kLabelPx) / 2, l.plot_bottom + 8 + face.ascent(kLabelPx), name,
           kOutside);
}

}  // namespace

Result<std::vector<uint8_t>> histogram_png(const Histogram& h, const std::string& title, const std::string& range_caption,
                                           bool log_counts) {
    auto face = TextFace::system_ui();
    if (!face) return face.error();
    PngCanvas c(kWidth, kHeight, {255, 255, 255});
    const bool outside = h.below > 0 || h.above > 0;
    const double end_room = outside ? kEndBinWidth + kEndBinGap : 0;
    const Layout l{kLeft + end_room, kWidth - kRight - end_room, kTop, kHeight - kBottom};

    uint64_t peak = std::max(h.below, h.above);
    for (uint64_t n : h.counts) peak = std::max(peak, n);
    CountAxis axis{log_counts, 1};
    if (log_counts)
        axis.top = static_cast<double>(decade_ticks(peak).back());
    else
        axis.top = std::max<double>(1, static_cast<double>(peak));
    const double axis_left = kLeft, axis_right = kWidth - kRight;
    draw_count_axis(c, *face, l, axis, axis_left, axis_right);

    const double lo = h.lo, hi = h.hi > h.lo ? h.hi : h.lo + 1;
    const double bar = h.counts.empty() ? 0 : (l.plot_right - l.plot_left) / static_cast<double>(h.counts.size());
    for (size_t i = 0; i < h.counts.size(); ++i) {
        if (h.counts[i] == 0) continue;
        // A sliver for small counts, so a lone value still shows; whole-pixel edges keep equal gaps.
        const double top = l.plot_bottom - std::max(axis.fraction(h.counts[i]) * l.height(), 2.0);
        const double gap = bar > 4 ? 1.0 : 0.0;
        const double left = std::round(l.plot_left + i * bar), right = std::round(l.plot_left + (i + 1) * bar) - gap;
        c.fill(left, top, std::max(right, left + 1), l.plot_bottom, kBar);
    }
    if (outside) {
        draw_end_bin(c, *face, l, axis, kLeft, h.below, "below");
        draw_end_bin(c, *face, l, axis, kWidth - kRight - kEndBinWidth, h.above, "above");
    }
    c.fill(axis_left - 1, kTop, axis_left, l.plot_bottom + 1, kInk);  // count axis
    c.fill(axis_left - 1, l.plot_bottom, axis_right, l.plot_bottom + 1, kInk);  // value axis
    draw_value_axis(c, *face, l, lo, hi);

    // Axis titles: the count axis' reads bottom to top along it, the value axis' under its labels.
    const std::string count_title = log_counts ? "count (log scale)" : "count";
    c.text(*face, kLabelPx, 6 + face->ascent(kLabelPx), (kTop + l.plot_bottom) / 2 + face->width(count_title, kLabelPx) / 2, count_title,
           kMuted, true);
    const std::string value_title = "value";
    c.text(*face, kLabelPx, (l.plot_left + l.plot_right) / 2 - face->width(value_title, kLabelPx) / 2, kHeight - 10, value_title, kMuted);

    c.text(*face, kTitlePx, kLeft, 22, title, kInk);
    c.text(*face, kLabelPx, kLeft, 42, range_caption, kMuted);
    if (outside) {
        // Legend: what the orange end bins mean.
        const std::string legend = "outside [" + tick_label(h.lo, (hi - lo) / 1000) + ", " + tick_label(h.hi, (hi - lo) / 1000) +
            "]: " + std::to_string(h.below) + " below, " + std::to_string(h.above) + " above";
        const double w = face->width(legend, kLabelPx);
        const double x = kWidth - kRight - w;
        c.fill(x - 18, 32, x - 6, 44, kOutside);
        c.text(*face, kLabelPx, x, 42, legend, kInk);
    }
    std::vector<uint8_t> bytes = c.png();
    if (bytes.empty()) return Error{ErrorCode::E_ENCODE, "", std::nullopt, "the PNG encoder failed"};
    return bytes;
}

}  // namespace mlens::cli
