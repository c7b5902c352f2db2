// The value range a histogram is drawn over, chosen by mode from a tensor's statistics, so the
// CLI (`mlens hist`) and the app's Weights panel bin the same tensor over the same range.
//
// Trained weights are heavy-tailed: a few outlier channels can sit 50-100x beyond the bulk, and
// a min..max range then squeezes the bulk into one or two bins. The modes:
//  - full:      [min, max].
//  - central:   [p0.1, p99.9] (stats.h percentiles); 0.2% of the values fall outside.
//  - symmetric: [-m, m] with m = max(|min|, |max|), so 0 sits in the middle.
//  - custom:    the caller's [lo, hi]; without one, as automatic.
//  - automatic: central widened by kAutoMargin of its width on each side (never past min..max)
//               when the tensor has outliers, i.e. max(|min|, |max|) > kOutlierRatio x
//               max(|p0.1|, |p99.9|) and p99.9 > p0.1; otherwise full. `resolved` says which
//               one it took.
// Values outside the range are counted by compute_histogram in below/above.
// A statistics record with no finite value (NaN min/max) gives [0, 1], resolved as full; a range of zero width is
// returned as is (compute_histogram widens it). A custom range is returned as given: the
// caller validates it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mlens/quant/stats.h"

namespace mlens {

enum class HistogramRangeMode { automatic, full, central, symmetric, custom };

inline constexpr double kOutlierRatio = 10.0;
inline constexpr double kAutoMargin = 0.1;

struct HistogramRange {
    double lo = 0, hi = 1;
    HistogramRangeMode mode = HistogramRangeMode::full;  // the mode asked for
    HistogramRangeMode resolved = HistogramRangeMode::full;  // what automatic chose; else == mode
};

// True when the extreme values sit beyond kOutlierRatio x the p0.1/p99.9 magnitude.
bool has_outliers(const TensorStats& stats);

HistogramRange pick_histogram_range(const TensorStats& stats, HistogramRangeMode mode,
                                    std::optional<std::pair<double, double>> custom = std::nullopt);

// "auto", "full", "p999", "symmetric", "custom": the names the CLI and JSON use.
std::string_view range_mode_name(HistogramRangeMode mode);
std::optional<HistogramRangeMode> range_mode_from_name(std::string_view name);
// Short human text for labels: "auto: p0.1-p99.9", "min-max", "symmetric around 0", ... (the
// app's words, those of its range picker).
std::string range_mode_caption(const HistogramRange& range);
// The mode asked for and the one it resolved to in range_mode_name's words, those of
// --range-mode and of JSON's "range_mode" and "range_resolved": "mode auto, resolved full",
// "mode p999" (mlens hist's text and its PNG).
std::string range_mode_words(const HistogramRange& range);

}  // namespace mlens
