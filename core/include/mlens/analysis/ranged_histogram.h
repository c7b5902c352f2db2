// Ranged histogram: the histogram of a tensor's values over the range a mode picks
// (histogram_range.h) — the one pass `mlens hist` and the app's Weights panel both run, so they
// bin the same tensor over the same range.
//
// Contract:
//  - The range: the request's custom [lo, hi] when set (mode custom, as given: the caller
//    validates it); else, given the tensor's statistics, the one pick_histogram_range chooses
//    for `mode`; else [min, max] (a default HistogramRange: mode and resolved full).
//  - range_needs_statistics says whether the range depends on the statistics (no custom range
//    and a mode other than full); without them such a request falls back to [min, max].
//  - The histogram has `bins` bins: over [min, max] of the values when the range resolves to
//    full (compute_histogram's own default; `over_min_max`, when given, is that histogram
//    already computed with the statistics, and is taken instead of a new pass), else over the
//    range. Values outside it are counted in below/above. Errors and cancellation are the
//    histogram pass's.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "mlens/quant/histogram_range.h"
#include "mlens/quant/stats.h"

namespace mlens {

struct RangedHistogramRequest {
    uint32_t bins = 64;
    HistogramRangeMode mode = HistogramRangeMode::automatic;
    std::optional<std::pair<double, double>> custom;  // [lo, hi], overrides `mode`
};

struct RangedHistogram {
    Histogram histogram;
    HistogramRange range;  // how the range was chosen
};

bool range_needs_statistics(const RangedHistogramRequest& request);

HistogramRange choose_histogram_range(const RangedHistogramRequest& request, const TensorStats* stats);

Result<RangedHistogram> ranged_histogram(const FloatSource& values, const RangedHistogramRequest& request, const TensorStats* stats,
                                         Histogram* over_min_max, JobContext* job);

}  // namespace mlens
