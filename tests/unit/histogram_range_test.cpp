// Histogram range modes on heavy-tailed weights: a seeded N(0, 1) tensor with two planted outlier
// columns (x80), as trained ffn_down and attention-output weights have. The automatic range keeps
// the bulk spread over the bins and counts the outliers in below/above; the CLI and the core
// pick the same range.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "cli_runner.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/histogram_range.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr uint64_t kColumns = 4096, kRows = 16;
constexpr uint64_t kOutlierColumns[] = {7, 2900};

// Row-major kRows x kColumns, N(0, 1) from a fixed seed, the outlier columns scaled by 80.
std::vector<float> weights_with_outlier_columns() {
    std::mt19937 rng(20240611);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(kColumns * kRows);
    for (float& x : v) x = normal(rng);
    for (uint64_t r = 0; r < kRows; ++r)
        for (uint64_t c : kOutlierColumns) v[r * kColumns + c] *= 80.0f;
    return v;
}

struct Outside {
    uint64_t below = 0, above = 0;
};

Outside count_outside(const std::vector<float>& v, double lo, double hi) {
    Outside o;
    for (float x : v) {
        o.below += static_cast<double>(x) < lo;
        o.above += static_cast<double>(x) > hi;
    }
    return o;
}

double largest_bin_share(const Histogram& h, uint64_t total) {
    return static_cast<double>(*std::max_element(h.counts.begin(), h.counts.end())) / static_cast<double>(total);
}

// Pixels of the end bins' colour (values outside the range), and the distinct colours, of a
// picture `mlens hist --png` drew.
struct PngSummary {
    int width = 0, height = 0;
    uint64_t outside_pixels = 0;
    size_t colours = 0;
};

PngSummary read_png(const std::string& path) {
    PngSummary out;
    int channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &out.width, &out.height, &channels, 3);
    REQUIRE(pixels);
    std::set<uint32_t> colours;
    for (size_t i = 0; i < static_cast<size_t>(out.width) * out.height; ++i) {
        const unsigned char* p = pixels + i * 3;
        out.outside_pixels += p[0] == 214 && p[1] == 120 && p[2] == 36;
        colours.insert(uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]);
    }
    stbi_image_free(pixels);
    out.colours = colours.size();
    return out;
}

struct OutlierModel {
    test::TempDir dir;
    std::vector<float> values = weights_with_outlier_columns();
    std::string path = dir.file("outliers.gguf");
    OutlierModel() { test::write_fixture_model(path, {{"blk.0.ffn_down.weight", GGML_TYPE_F32, {kColumns, kRows}, values}}); }
};

}  // namespace

TEST_CASE("the automatic histogram range keeps the bulk readable when outlier columns exist", "[histogram_range]") {
    OutlierModel m;
    auto model = open_gguf(m.path);
    REQUIRE(model.ok());
    auto view = TensorView::open(*model, 0);
    REQUIRE(view.ok());
    auto stats = compute_stats(*view);
    REQUIRE(stats.ok());
    const TensorStats& s = *stats;
    const auto [min_it, max_it] = std::minmax_element(m.values.begin(), m.values.end());
    CHECK(s.min == *min_it);
    CHECK(s.max == *max_it);
    CHECK(has_outliers(s));

    HistogramRange automatic = pick_histogram_range(s, HistogramRangeMode::automatic);
    CHECK(automatic.mode == HistogramRangeMode::automatic);
    CHECK(automatic.resolved == HistogramRangeMode::central);
    const double width = s.percentiles.back() - s.percentiles.front();
    CHECK(automatic.lo == s.percentiles.front() - width * kAutoMargin);
    CHECK(automatic.hi == s.percentiles.back() + width * kAutoMargin);
    // The bulk of N(0, 1) ends near ±3.1 at p0.1/p99.9; the outliers reach far beyond.
    CHECK(automatic.lo > -4.5);
    CHECK(automatic.hi < 4.5);
    CHECK(std::max(-s.min, s.max) > 100);

    auto h = compute_histogram(*view, 64, std::make_pair(automatic.lo, automatic.hi));
    REQUIRE(h.ok());
    const Outside outside = count_outside(m.values, automatic.lo, automatic.hi);
    CHECK(h->below == outside.below);
    CHECK(h->above == outside.above);
    uint64_t inside = 0;
    for (uint64_t n : h->counts) inside += n;
    CHECK(inside + h->below + h->above == kColumns * kRows);
    // Every value beyond 4.5 is one of the 32 planted ones, and each of those is outside.
    uint64_t far = std::count_if(m.values.begin(), m.values.end(), [](float x) { return std::fabs(x) > 4.5f; });
    CHECK(far >= 20);
    CHECK(h->below + h->above >= far);
    CHECK(h->below + h->above <= 32 + 2 * kColumns * kRows / 1000);
    // The bulk spreads over the bins: no bin holds more than 8% of the values...
    CHECK(largest_bin_share(*h, kColumns * kRows) < 0.08);
    // ...whereas over min..max two bins hold nearly everything.
    auto full = compute_histogram(*view, 64);
    REQUIRE(full.ok());
    std::vector<uint64_t> sorted = full->counts;
    std::sort(sorted.rbegin(), sorted.rend());
    CHECK(static_cast<double>(sorted[0] + sorted[1]) / (kColumns * kRows) > 0.9);
}

TEST_CASE("histogram range modes: full, p0.1-p99.9, symmetric, custom", "[histogram_range]") {
    TensorStats s;
    s.min = -300;
    s.max = 120;
    s.percentiles.front() = -3;
    s.percentiles.back() = 2.5;
    HistogramRange full = pick_histogram_range(s, HistogramRangeMode::full);
    CHECK((full.lo == -300 && full.hi == 120 && full.resolved == HistogramRangeMode::full));
    HistogramRange central = pick_histogram_range(s, HistogramRangeMode::central);
    CHECK((central.lo == -3 && central.hi == 2.5 && central.resolved == HistogramRangeMode::central));
    HistogramRange symmetric = pick_histogram_range(s, HistogramRangeMode::symmetric);
    CHECK((symmetric.lo == -300 && symmetric.hi == 300));
    HistogramRange custom = pick_histogram_range(s, HistogramRangeMode::custom, std::make_pair(-1.0, 1.0));
    CHECK((custom.lo == -1 && custom.hi == 1 && custom.resolved == HistogramRangeMode::custom));
    HistogramRange automatic = pick_histogram_range(s, HistogramRangeMode::automatic);
    CHECK((automatic.lo == -3 - 5.5 * kAutoMargin && automatic.hi == 2.5 + 5.5 * kAutoMargin));
    CHECK(range_mode_caption(automatic) == "auto: p0.1-p99.9 widened, outliers outside");
    CHECK(range_mode_words(automatic) == "mode auto, resolved p999");
    CHECK(range_mode_words(full) == "mode full");
    // Custom without a range is automatic.
    HistogramRange no_custom = pick_histogram_range(s, HistogramRangeMode::custom);
    CHECK((no_custom.lo == automatic.lo && no_custom.hi == automatic.hi && no_custom.resolved == HistogramRangeMode::central));

    // Without outliers (max |x| within 10x the p0.1/p99.9 magnitude) automatic is min..max.
    s.min = -29;
    s.max = 12;
    HistogramRange plain = pick_histogram_range(s, HistogramRangeMode::automatic);
    CHECK((plain.lo == -29 && plain.hi == 12 && plain.resolved == HistogramRangeMode::full));
    CHECK(range_mode_caption(plain) == "auto: min-max");
    CHECK(range_mode_words(plain) == "mode auto, resolved full");
    // The widening never reaches past min..max.
    s.min = -3.1;
    s.max = 40;
    HistogramRange clamped = pick_histogram_range(s, HistogramRangeMode::automatic);
    CHECK((clamped.lo == -3.1 && clamped.hi == 2.5 + 5.5 * kAutoMargin));

    // A bulk of a single value (p0.1 == p99.9, mostly zeros) has no width: min..max.
    TensorStats zeros;
    zeros.min = -8;
    zeros.max = 0;
    CHECK_FALSE(has_outliers(zeros));
    CHECK(pick_histogram_range(zeros, HistogramRangeMode::automatic).lo == -8);

    // No finite value: [0, 1].
    TensorStats none;
    none.min = none.max = std::nan("");
    HistogramRange empty = pick_histogram_range(none, HistogramRangeMode::automatic);
    CHECK((empty.lo == 0 && empty.hi == 1));

    for (HistogramRangeMode mode : {HistogramRangeMode::automatic, HistogramRangeMode::full, HistogramRangeMode::central,
                                    HistogramRangeMode::symmetric, HistogramRangeMode::custom})
        CHECK(range_mode_from_name(range_mode_name(mode)) == mode);
    CHECK(range_mode_name(HistogramRangeMode::central) == "p999");
    CHECK_FALSE(range_mode_from_name("p99").has_value());
}

TEST_CASE("mlens hist picks the automatic range by default and counts the outliers outside", "[histogram_range][cli]") {
    OutlierModel m;
    auto model = open_gguf(m.path);
    auto view = TensorView::open(*model, 0);
    auto stats = compute_stats(*view);
    REQUIRE(stats.ok());
    const HistogramRange expected = pick_histogram_range(*stats, HistogramRangeMode::automatic);
    const Outside outside = count_outside(m.values, expected.lo, expected.hi);

    auto run = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--bins", "32", "--json"});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    auto j = nlohmann::json::parse(run.out);
    CHECK(j["range_mode"] == "auto");
    CHECK(j["range_resolved"] == "p999");
    CHECK(j["lo"].get<double>() == expected.lo);
    CHECK(j["hi"].get<double>() == expected.hi);
    CHECK(j["below"] == outside.below);
    CHECK(j["above"] == outside.above);
    CHECK(j["counts"].size() == 32);

    auto full = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--range-mode", "full", "--json"});
    REQUIRE(full.exit_status == 0);
    auto jf = nlohmann::json::parse(full.out);
    CHECK(jf["range_mode"] == "full");
    CHECK(jf["lo"].get<double>() == stats->min);
    CHECK(jf["hi"].get<double>() == stats->max);
    CHECK((jf["below"] == 0 && jf["above"] == 0));

    auto symmetric = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--range-mode", "symmetric", "--json"});
    REQUIRE(symmetric.exit_status == 0);
    auto js = nlohmann::json::parse(symmetric.out);
    CHECK(js["hi"].get<double>() == std::max(-stats->min, stats->max));
    CHECK(js["lo"].get<double>() == -js["hi"].get<double>());

    auto custom = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--range", "-1", "1", "--json"});
    REQUIRE(custom.exit_status == 0);
    auto jc = nlohmann::json::parse(custom.out);
    CHECK(jc["range_mode"] == "custom");
    const Outside beyond_one = count_outside(m.values, -1, 1);
    CHECK(jc["below"] == beyond_one.below);
    CHECK(jc["above"] == beyond_one.above);

    auto text = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--bins", "8"});
    REQUIRE(text.exit_status == 0);
    CHECK(text.out.find("(mode auto, resolved p999); below: " + std::to_string(outside.below) +
                        ", above: " + std::to_string(outside.above) + "\n") != std::string::npos);

    auto bad = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--range-mode", "p99"});
    CHECK(bad.exit_status != 0);
}

TEST_CASE("mlens hist --png marks the values outside the range in end bins and writes antialiased text", "[histogram_range][hist_export]") {
    OutlierModel m;
    const std::string auto_png = m.dir.file("auto.png"), full_png = m.dir.file("full.png");
    auto drawn = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--png", auto_png, "--log"});
    INFO(drawn.err);
    REQUIRE(drawn.exit_status == 0);
    auto full = test::run_mlens({"hist", m.path, "blk.0.ffn_down.weight", "--png", full_png, "--range-mode", "full"});
    REQUIRE(full.exit_status == 0);
    const PngSummary a = read_png(auto_png), f = read_png(full_png);
    CHECK((a.width == 900 && a.height == 420));
    // The end bins, their counts and the legend swatch are drawn in their colour; over min..max
    // nothing is outside and none of it is drawn.
    CHECK(a.outside_pixels > 200);
    CHECK(f.outside_pixels == 0);
    // TrueType text is antialiased: many shades of grey, unlike a pixel font's two colours.
    CHECK(a.colours > 64);
    CHECK(f.colours > 64);
}
