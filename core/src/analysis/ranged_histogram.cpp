#include "mlens/analysis/ranged_histogram.h"

namespace mlens {

bool range_needs_statistics(const RangedHistogramRequest& request) {
    return !request.custom && request.mode != HistogramRangeMode::full;
}

HistogramRange choose_histogram_range(const RangedHistogramRequest& request, const TensorStats* stats) {
    if (request.custom) return pick_histogram_range({}, HistogramRangeMode::custom, request.custom);
    if (stats) return pick_histogram_range(*stats, request.mode);
    return HistogramRange{};
}

Result<RangedHistogram> ranged_histogram(const FloatSource& values, const RangedHistogramRequest& request, const TensorStats* stats,
                                         Histogram* over_min_max, JobContext* job) {
    RangedHistogram out;
    out.range = choose_histogram_range(request, stats);
    if (out.range.resolved == HistogramRangeMode::full && over_min_max) {
        out.histogram = std::move(*over_min_max);
        return out;
    }
    std::optional<std::pair<double, double>> range;
    if (out.range.resolved != HistogramRangeMode::full) range = std::make_pair(out.range.lo, out.range.hi);
    Result<Histogram> histogram = compute_histogram(values, request.bins, range, job);
    if (!histogram) return histogram.error();
    out.histogram = std::move(histogram).value();
    return out;
}

}  // namespace mlens
