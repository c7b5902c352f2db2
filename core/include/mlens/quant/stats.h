// Statistics and histograms of a FloatSource, computed in chunks on several threads.
//
// Contract:
//  - compute_stats makes two passes: moments, extremes and counts; then a 4096-bin histogram over
//    [min, max] from which percentiles are read (exact to one bin width, (max-min)/4096; its bins
//    are found in float). NaN and ±Inf are counted and excluded from every other figure. Sums and
//    central moments are in double (summed in vector lanes, so the last bits depend on the order).
//  - compute_histogram counts finite values in `bins` equal bins over [lo, hi] (values outside
//    are counted in below/above); with no range given it uses [min, max] of the data. A value's
//    bin is floor((x - lo) * bins / (hi - lo)), the last bin also holding hi; hi <= lo is taken
//    as [lo, lo + 1].
//  - compute_stats_and_histogram gives compute_stats' figures and, from the same second pass,
//    the histogram compute_histogram(source, bins) would give (equal counts, lo and hi), so the
//    source is decoded twice instead of three times.
//  - Both honour JobContext cancel (E_CANCELLED) and report progress.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/float_source.h"

namespace mlens {

struct TensorStats {
    uint64_t count = 0;          // all elements
    uint64_t finite = 0;
    uint64_t nan = 0;
    uint64_t inf = 0;
    uint64_t zeros = 0;
    double min = 0, max = 0, mean = 0, std = 0, mean_abs = 0;
    double kurtosis = 0;         // excess kurtosis (0 for a normal distribution)
    static constexpr std::array<double, 9> kPercentiles = {0.1, 1, 5, 25, 50, 75, 95, 99, 99.9};
    std::array<double, 9> percentiles{};
};

struct Histogram {
    double lo = 0, hi = 0;
    std::vector<uint64_t> counts;
    uint64_t below = 0, above = 0;
    double bin_width() const { return counts.empty() ? 0 : (hi - lo) / static_cast<double>(counts.size()); }
    uint64_t total() const;
};

struct StatsAndHistogram {
    TensorStats stats;
    Histogram histogram;
};

Result<TensorStats> compute_stats(const FloatSource& source, JobContext* job = nullptr, unsigned threads = 0);
Result<StatsAndHistogram> compute_stats_and_histogram(const FloatSource& source, uint32_t bins,
                                                      JobContext* job = nullptr, unsigned threads = 0);
Result<Histogram> compute_histogram(const FloatSource& source, uint32_t bins,
                                    std::optional<std::pair<double, double>> range = std::nullopt,
                                    JobContext* job = nullptr, unsigned threads = 0);

}  // namespace mlens
