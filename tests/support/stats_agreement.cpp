#include "stats_agreement.h"

#include <catch2/catch.hpp>

#include "mlens/quant/stats.h"
#include "numpy_histogram.h"

namespace mlens::test {

void require_same_figures(const FloatSource& view, const std::vector<float>& values, uint32_t bins, unsigned threads) {
    const VectorSource plain(values);
    REQUIRE(plain.code_values().empty());
    auto a = compute_stats_and_histogram(view, bins, nullptr, threads);
    auto b = compute_stats_and_histogram(plain, bins, nullptr, threads);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->stats.count == b->stats.count);
    CHECK(a->stats.finite == b->stats.finite);
    CHECK(a->stats.nan == b->stats.nan);
    CHECK(a->stats.inf == b->stats.inf);
    CHECK(a->stats.zeros == b->stats.zeros);
    CHECK(a->stats.min == b->stats.min);
    CHECK(a->stats.max == b->stats.max);
    CHECK(a->stats.mean == Approx(b->stats.mean).margin(1e-12));
    CHECK(a->stats.mean_abs == Approx(b->stats.mean_abs));
    CHECK(a->stats.std == Approx(b->stats.std));
    CHECK(a->stats.kurtosis == Approx(b->stats.kurtosis).margin(1e-9));
    CHECK(a->stats.percentiles == b->stats.percentiles);
    CHECK(a->histogram.lo == b->histogram.lo);
    CHECK(a->histogram.hi == b->histogram.hi);
    CHECK(a->histogram.counts == b->histogram.counts);
    CHECK(a->histogram.total() == a->stats.finite);
    // Both in numpy's bins (compared to a bool first: Catch would print every count).
    const bool numpy_bins = b->histogram.counts == numpy_histogram(values, b->histogram.lo, b->histogram.hi, bins).counts;
    CHECK(numpy_bins);
    auto ranged_a = compute_histogram(view, bins, std::make_pair(-0.25, 0.5), nullptr, threads);
    auto ranged_b = compute_histogram(plain, bins, std::make_pair(-0.25, 0.5), nullptr, threads);
    REQUIRE(ranged_a.ok());
    CHECK(ranged_a->counts == ranged_b->counts);
    CHECK(ranged_a->below == ranged_b->below);
    CHECK(ranged_a->above == ranged_b->above);
    const NumpyHistogram ranged_numpy = numpy_histogram(values, -0.25, 0.5, bins);
    const bool ranged_numpy_bins = ranged_b->counts == ranged_numpy.counts;
    CHECK(ranged_numpy_bins);
    CHECK(ranged_b->below == ranged_numpy.below);
    CHECK(ranged_b->above == ranged_numpy.above);
}

}  // namespace mlens::test
