// The ranged histogram pass `mlens hist` and the Weights panel share: which range it takes from
// the request and the statistics, and that a histogram over [min, max] already computed is taken
// instead of a second pass.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "mlens/analysis/ranged_histogram.h"
#include "mlens/quant/float_source.h"
#include "mlens/quant/stats.h"

using namespace mlens;

namespace {

// N(0, 1) from a fixed seed with a few values 80 times larger: automatic resolves to central.
std::vector<float> heavy_tailed() {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(20000);
    for (float& x : v) x = normal(rng);
    for (size_t i = 0; i < v.size(); i += 2000) v[i] *= 80.0f;
    return v;
}

}  // namespace

TEST_CASE("a ranged histogram takes the custom range, else the mode's, else min..max", "[ranged_histogram]") {
    const std::vector<float> values = heavy_tailed();
    VectorSource source(values);
    auto stats = compute_stats(source);
    REQUIRE(stats.ok());

    RangedHistogramRequest request{32, HistogramRangeMode::automatic, std::nullopt};
    CHECK(range_needs_statistics(request));
    auto automatic = ranged_histogram(source, request, &*stats, nullptr, nullptr);
    REQUIRE(automatic.ok());
    const HistogramRange picked = pick_histogram_range(*stats, HistogramRangeMode::automatic);
    CHECK(automatic->range.resolved == HistogramRangeMode::central);
    CHECK(automatic->range.lo == picked.lo);
    CHECK(automatic->range.hi == picked.hi);
    auto direct = compute_histogram(source, 32, std::make_pair(picked.lo, picked.hi));
    REQUIRE(direct.ok());
    CHECK(automatic->histogram.counts == direct->counts);
    CHECK(automatic->histogram.below + automatic->histogram.above > 0);

    // Without statistics a mode that needs them falls back to min..max.
    auto unknown = ranged_histogram(source, request, nullptr, nullptr, nullptr);
    REQUIRE(unknown.ok());
    CHECK(unknown->range.resolved == HistogramRangeMode::full);
    auto min_max = compute_histogram(source, 32);
    REQUIRE(min_max.ok());
    CHECK(unknown->histogram.counts == min_max->counts);

    request.custom = std::make_pair(-1.0, 1.0);
    CHECK_FALSE(range_needs_statistics(request));
    auto custom = ranged_histogram(source, request, &*stats, nullptr, nullptr);
    REQUIRE(custom.ok());
    CHECK(custom->range.mode == HistogramRangeMode::custom);
    CHECK(custom->histogram.lo == -1.0);
    CHECK(custom->histogram.hi == 1.0);
}

TEST_CASE("a ranged histogram over min..max takes the one computed with the statistics", "[ranged_histogram]") {
    const std::vector<float> values = heavy_tailed();
    VectorSource source(values);
    RangedHistogramRequest request{16, HistogramRangeMode::full, std::nullopt};
    CHECK_FALSE(range_needs_statistics(request));
    Histogram computed;
    computed.counts.assign(16, 3);  // recognisable: not what a pass over the values gives
    auto taken = ranged_histogram(source, request, nullptr, &computed, nullptr);
    REQUIRE(taken.ok());
    CHECK(taken->histogram.counts == std::vector<uint64_t>(16, 3));
    CHECK(taken->range.resolved == HistogramRangeMode::full);

    // A range other than min..max bins the values again.
    auto stats = compute_stats(source);
    REQUIRE(stats.ok());
    request.mode = HistogramRangeMode::symmetric;
    computed.counts.assign(16, 3);
    auto binned = ranged_histogram(source, request, &*stats, &computed, nullptr);
    REQUIRE(binned.ok());
    CHECK(binned->range.resolved == HistogramRangeMode::symmetric);
    CHECK(binned->histogram.counts != std::vector<uint64_t>(16, 3));
}
