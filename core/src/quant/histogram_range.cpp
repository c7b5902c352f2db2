#include "mlens/quant/histogram_range.h"

#include <algorithm>
#include <cmath>

#include "mlens/util/name_table.h"

namespace mlens {

namespace {

double bulk_magnitude(const TensorStats& s) { return std::max(std::fabs(s.percentiles.front()), std::fabs(s.percentiles.back())); }

double extreme_magnitude(const TensorStats& s) { return std::max(std::fabs(s.min), std::fabs(s.max)); }

}  // namespace

bool has_outliers(const TensorStats& stats) {
    if (!std::isfinite(stats.min) || !std::isfinite(stats.max)) return false;
    // A bulk of one value (mostly zeros) has no width to spread over the bins: min..max shows
    // the rest better than a range of zero width.
    if (!(stats.percentiles.back() > stats.percentiles.front())) return false;
    return extreme_magnitude(stats) > kOutlierRatio * bulk_magnitude(stats);
}

HistogramRange pick_histogram_range(const TensorStats& stats, HistogramRangeMode mode, std::optional<std::pair<double, double>> custom) {
    HistogramRange r;
    r.mode = r.resolved = mode;
    if (mode == HistogramRangeMode::custom && custom) {
        r.lo = custom->first;
        r.hi = custom->second;
        return r;
    }
    if (mode == HistogramRangeMode::automatic || mode == HistogramRangeMode::custom)
        r.resolved = has_outliers(stats) ? HistogramRangeMode::central : HistogramRangeMode::full;
    if (!std::isfinite(stats.min) || !std::isfinite(stats.max)) return r;
    switch (r.resolved) {
        case HistogramRangeMode::central:
            r.lo = stats.percentiles.front();
            r.hi = stats.percentiles.back();
            if (mode != HistogramRangeMode::central) {
                // A little room on each side, so the bulk's own tails are not cut at the edge bins.
                const double margin = (r.hi - r.lo) * kAutoMargin;
                r.lo = std::max(stats.min, r.lo - margin);
                r.hi = std::min(stats.max, r.hi + margin);
            }
            break;
        case HistogramRangeMode::symmetric:
            r.hi = extreme_magnitude(stats);
            r.lo = -r.hi;
            break;
        default:
            r.lo = stats.min;
            r.hi = stats.max;
            break;
    }
    return r;
}

constexpr NameRow<HistogramRangeMode> kRangeModeNames[] = {
    {HistogramRangeMode::automatic, "auto"}, {HistogramRangeMode::full, "full"}, {HistogramRangeMode::central, "p999"},
    {HistogramRangeMode::symmetric, "symmetric"}, {HistogramRangeMode::custom, "custom"}};

std::string_view range_mode_name(HistogramRangeMode mode) { return name_of(kRangeModeNames, mode, "full"); }

std::optional<HistogramRangeMode> range_mode_from_name(std::string_view name) { return value_of(kRangeModeNames, name); }

std::string range_mode_caption(const HistogramRange& range) {
    std::string resolved;
    switch (range.resolved) {
        case HistogramRangeMode::central:
            resolved = "p0.1-p99.9";
            break;
        case HistogramRangeMode::symmetric:
            resolved = "symmetric around 0";
            break;
        case HistogramRangeMode::custom:
            resolved = "custom";
            break;
        default:
            resolved = "min-max";
            break;
    }
    if (range.mode != HistogramRangeMode::automatic) return resolved;
    return range.resolved == HistogramRangeMode::central ? "auto: " + resolved + " widened, outliers outside" : "auto: " + resolved;
}

std::string range_mode_words(const HistogramRange& range) {
    std::string words = "mode " + std::string(range_mode_name(range.mode));
    if (range.resolved != range.mode) words += ", resolved " + std::string(range_mode_name(range.resolved));
    return words;
}

}  // namespace mlens
