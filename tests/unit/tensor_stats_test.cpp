// Statistics, histograms and comparisons give exact figures on data whose answers are known.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mlens/analysis/tensor_compare.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/row_series.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// Values 0, 1, ..., n-1 as F32, plus optional NaN/Inf at the end.
std::vector<float> ramp(uint64_t n) {
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
    return v;
}

}  // namespace

TEST_CASE("stats of a ramp are exact", "[stats]") {
    test::TempDir dir;
    auto values = ramp(100);
    values[98] = std::numeric_limits<float>::quiet_NaN();
    values[99] = std::numeric_limits<float>::infinity();
    test::write_fixture_model(dir.file("r.gguf"), {{"r", GGML_TYPE_F32, {100}, values}});
    auto model = open_gguf(dir.file("r.gguf"));
    auto view = TensorView::open(*model, 0);
    for (unsigned threads : {1u, 2u, 4u}) {
        auto s = compute_stats(*view, nullptr, threads);
        REQUIRE(s.ok());
        CHECK(s->count == 100);
        CHECK(s->finite == 98);
        CHECK(s->nan == 1);
        CHECK(s->inf == 1);
        CHECK(s->zeros == 1);
        CHECK(s->min == 0.0);
        CHECK(s->max == 97.0);
        CHECK(s->mean == Approx(48.5));
        CHECK(s->std == Approx(std::sqrt((98.0 * 98.0 - 1.0) / 12.0)));
        CHECK(s->mean_abs == Approx(48.5));
        CHECK(s->kurtosis == Approx(-6.0 * (98.0 * 98.0 + 1) / (5.0 * (98.0 * 98.0 - 1))).epsilon(1e-6));
        // Percentiles are the middles of 4096 bins, each within half a bin (97 / 8192) of the exact one.
        CHECK(s->percentile_within == 97.0 / 8192);
        CHECK(s->percentiles[4] == Approx(48.0).margin(s->percentile_within + 1e-9));  // median: rank 49 -> value 48
        CHECK(s->percentiles[0] == Approx(0.0).margin(s->percentile_within));
        CHECK(s->percentiles[8] == Approx(97.0).margin(s->percentile_within));
    }
}

TEST_CASE("histogram counts every finite value once, with outliers outside the range", "[stats]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("r.gguf"), {{"r", GGML_TYPE_F32, {64}, ramp(64)}});
    auto model = open_gguf(dir.file("r.gguf"));
    auto view = TensorView::open(*model, 0);
    auto h = compute_histogram(*view, 8);
    REQUIRE(h.ok());
    CHECK(h->lo == 0.0);
    CHECK(h->hi == 63.0);
    CHECK(h->total() == 64);
    CHECK(h->counts == std::vector<uint64_t>(8, 8));  // bin width 7.875: 0..7, 8..15, ..., 56..63
    auto ranged = compute_histogram(*view, 4, std::make_pair(10.0, 50.0));
    REQUIRE(ranged.ok());
    CHECK(ranged->below == 10);
    CHECK(ranged->above == 13);
    CHECK(ranged->counts == std::vector<uint64_t>{10, 10, 10, 11});
    JobContext cancelled;
    cancelled.cancel();
    CHECK(compute_histogram(*view, 4, std::nullopt, &cancelled).error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("comparison metrics and the worst row", "[stats]") {
    test::TempDir dir;
    auto a = test::test_signal(4 * 32);
    auto b = a;
    for (int i = 0; i < 32; ++i) b[3 * 32 + i] += 0.5f;  // row 3 is off by 0.5
    test::write_fixture_model(dir.file("a.gguf"), {{"w", GGML_TYPE_F32, {32, 4}, a}});
    test::write_fixture_model(dir.file("b.gguf"), {{"w", GGML_TYPE_F32, {32, 4}, b}});
    auto ma = open_gguf(dir.file("a.gguf"));
    auto mb = open_gguf(dir.file("b.gguf"));
    auto va = TensorView::open(*ma, 0);
    auto vb = TensorView::open(*mb, 0);
    auto c = compare_sources(*va, *vb, 32);
    REQUIRE(c.ok());
    double sum_a2 = 0;
    for (float x : a) sum_a2 += double(x) * x;
    CHECK(c->count == 128);
    CHECK(c->rmse == Approx(std::sqrt(32 * 0.25 / 128)));
    CHECK(c->max_abs == Approx(0.5).margin(1e-6));
    CHECK(c->mean_abs == Approx(0.125).margin(1e-6));
    CHECK(c->nmse == Approx(32 * 0.25 / sum_a2).epsilon(1e-5));
    CHECK(c->snr_db == Approx(10 * std::log10(sum_a2 / (32 * 0.25))).epsilon(1e-5));
    REQUIRE(!c->worst_rows.empty());
    CHECK(c->worst_rows[0].row == 3);
    CHECK(c->worst_rows[0].rmse == Approx(0.5).margin(1e-6));
    auto self = compare_sources(*va, *va, 32);
    CHECK(self->rmse == 0.0);
    CHECK(self->cosine == Approx(1.0));
    CHECK(std::isinf(self->snr_db));
}

TEST_CASE("comparison metrics, worst rows and worst blocks equal a float64 reference computation", "[stats][compare]") {
    // Over two million values (three chunks on two threads), with NaN and infinities on either side.
    const uint64_t row = 4096, rows = 520, block = 32, n = row * rows;
    std::vector<float> a = test::test_signal(n, 4), b(n);
    for (uint64_t i = 0; i < n; ++i) b[i] = a[i] + 1e-3f * static_cast<float>(std::sin(static_cast<double>(i) * 0.37));
    for (uint64_t i = 0; i < block; ++i) b[300 * row + 64 + i] += 0.25f;  // the worst block: row 300, columns 64..95
    a[17] = std::numeric_limits<float>::quiet_NaN();
    b[5000] = std::numeric_limits<float>::infinity();
    a[n - 1] = -std::numeric_limits<float>::infinity();
    auto c = compare_sources(VectorSource(a), VectorSource(b), row, 4, nullptr, 2, 0.0, 1.0, block);
    REQUIRE(c.ok());

    double err2 = 0, a2 = 0, b2 = 0, ab = 0, abs_err = 0, max_abs = 0;
    uint64_t count = 0;
    std::vector<double> row_err2(rows, 0.0), block_err2(n / block, 0.0);
    for (uint64_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
        const double x = a[i], y = b[i], d = x - y;
        err2 += d * d;
        a2 += x * x;
        b2 += y * y;
        ab += x * y;
        abs_err += std::fabs(d);
        max_abs = std::max(max_abs, std::fabs(d));
        row_err2[i / row] += d * d;
        block_err2[i / block] += d * d;
        ++count;
    }
    CHECK(c->count == count);
    CHECK(c->nonfinite == 3);
    CHECK(c->rmse == Approx(std::sqrt(err2 / count)).epsilon(1e-10));
    CHECK(c->nmse == Approx(err2 / a2).epsilon(1e-10));
    CHECK(c->mean_abs == Approx(abs_err / count).epsilon(1e-10));
    CHECK(c->max_abs == max_abs);
    CHECK(c->cosine == Approx(ab / std::sqrt(a2 * b2)).epsilon(1e-10));
    CHECK(c->snr_db == Approx(10 * std::log10(a2 / err2)).epsilon(1e-10));
    REQUIRE(c->worst_rows.size() == 4);
    REQUIRE(c->block_length == block);
    REQUIRE(c->worst_blocks.size() == 4);
    CHECK(c->worst_rows[0].row == 300);
    CHECK(c->worst_rows[0].rmse == Approx(std::sqrt(row_err2[300] / row)).epsilon(1e-10));
    CHECK(c->worst_blocks[0].block == (300 * row + 64) / block);
    CHECK(c->worst_blocks[0].row == 300);
    CHECK(c->worst_blocks[0].column == 64);
    CHECK(c->worst_blocks[0].rmse == Approx(std::sqrt(block_err2[(300 * row + 64) / block] / block)).epsilon(1e-10));
    // The rest of the worst blocks, in order: the largest of the reference's block errors (the
    // block holding a NaN or an infinity counts only its finite pairs).
    std::vector<std::pair<double, uint64_t>> ranked;
    for (uint64_t k = 0; k < block_err2.size(); ++k) {
        uint64_t finite = 0;
        for (uint64_t i = k * block; i < (k + 1) * block; ++i) finite += std::isfinite(a[i]) && std::isfinite(b[i]);
        ranked.push_back({-std::sqrt(block_err2[k] / static_cast<double>(finite)), k});
    }
    std::sort(ranked.begin(), ranked.end());
    for (size_t k = 0; k < 4; ++k) {
        CHECK(c->worst_blocks[k].block == ranked[k].second);
        CHECK(c->worst_blocks[k].rmse == Approx(-ranked[k].first).epsilon(1e-10));
    }
}

TEST_CASE("stats with a histogram equal compute_stats and compute_histogram", "[stats]") {
    test::TempDir dir;
    auto values = test::test_signal(3 * 65536 + 77, 3);
    values[5] = std::numeric_limits<float>::quiet_NaN();
    values[70000] = -std::numeric_limits<float>::infinity();
    values[9] = 0.0f;
    test::write_fixture_model(dir.file("s.gguf"), {{"s", GGML_TYPE_F32, {values.size()}, values}});
    auto model = open_gguf(dir.file("s.gguf"));
    auto view = TensorView::open(*model, 0);
    for (uint32_t bins : {1u, 7u, 256u}) {
        auto fused = compute_stats_and_histogram(*view, bins, nullptr, 2);
        auto stats = compute_stats(*view, nullptr, 2);
        auto hist = compute_histogram(*view, bins, std::nullopt, nullptr, 2);
        REQUIRE(fused.ok());
        CHECK(fused->histogram.lo == hist->lo);
        CHECK(fused->histogram.hi == hist->hi);
        CHECK(fused->histogram.counts == hist->counts);
        CHECK(fused->histogram.below == 0);
        CHECK(fused->histogram.above == 0);
        CHECK(fused->histogram.total() == values.size() - 2);
        CHECK(fused->stats.finite == stats->finite);
        CHECK(fused->stats.nan == 1);
        CHECK(fused->stats.inf == 1);
        CHECK(fused->stats.zeros == stats->zeros);
        CHECK(fused->stats.min == stats->min);
        CHECK(fused->stats.max == stats->max);
        CHECK(fused->stats.mean == Approx(stats->mean));
        CHECK(fused->stats.std == Approx(stats->std));
        // Percentiles come from a histogram of at least 4096 bins whose bins add up to the
        // requested ones (4096 for 1 and 256 bins, 7168 for 7): equal to one 4096th of the range.
        const double bin = (stats->max - stats->min) / 4096;
        for (size_t p = 0; p < stats->percentiles.size(); ++p)
            CHECK(fused->stats.percentiles[p] == Approx(stats->percentiles[p]).margin(bin));
        if (bins != 7) CHECK(fused->stats.percentiles == stats->percentiles);
    }
    // Against a float64 reference computation.
    double sum = 0, sum_abs = 0, n = 0, lo = INFINITY, hi = -INFINITY;
    for (float x : values)
        if (std::isfinite(x)) {
            sum += x;
            sum_abs += std::fabs(x);
            n += 1;
            lo = std::min<double>(lo, x);
            hi = std::max<double>(hi, x);
        }
    double mean = sum / n, m2 = 0, m4 = 0;
    for (float x : values)
        if (std::isfinite(x)) {
            double d = x - mean;
            m2 += d * d;
            m4 += d * d * d * d;
        }
    auto s = compute_stats(*view);
    CHECK(s->min == lo);
    CHECK(s->max == hi);
    CHECK(s->mean == Approx(mean).margin(1e-12));
    CHECK(s->mean_abs == Approx(sum_abs / n));
    CHECK(s->std == Approx(std::sqrt(m2 / n)));
    CHECK(s->kurtosis == Approx((m4 / n) / ((m2 / n) * (m2 / n)) - 3.0).margin(1e-9));
    CHECK(compute_stats_and_histogram(*view, 0).error().code == ErrorCode::E_RANGE);
}

TEST_CASE("row series: whole rows per chunk, a long row in pieces", "[stats]") {
    test::TempDir dir;
    // 300 rows of 1000 (several rows per read) and one row of 200,000 (read in pieces).
    std::vector<float> rows(300 * 1000), line(200000);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i / 1000) * ((i % 2) ? 1.0f : -1.0f);
    for (size_t i = 0; i < line.size(); ++i) line[i] = i == 123456 ? -7.0f : 2.0f;
    test::write_fixture_model(dir.file("r.gguf"), {{"rows", GGML_TYPE_F32, {1000, 300}, rows}, {"line", GGML_TYPE_F32, {200000}, line}});
    auto model = open_gguf(dir.file("r.gguf"));
    for (unsigned threads : {1u, 2u}) {
        auto r = row_series(*TensorView::open(*model, "rows"), nullptr, threads);
        REQUIRE(r.ok());
        REQUIRE(r->size() == 2);
        REQUIRE((*r)[0].values.size() == 300);
        for (size_t row : {0u, 1u, 157u, 299u}) {
            CHECK((*r)[0].values[row] == static_cast<float>(row));  // every |x| equals the row index
            CHECK((*r)[1].values[row] == static_cast<float>(row));
        }
    }
    auto l = row_series(*TensorView::open(*model, "line"));
    REQUIRE(l.ok());
    REQUIRE((*l)[0].values.size() == 1);
    CHECK((*l)[0].values[0] == Approx(std::sqrt((199999 * 4.0 + 49.0) / 200000)));
    CHECK((*l)[1].values[0] == 7.0f);
    JobContext cancelled;
    cancelled.cancel();
    CHECK(row_series(*TensorView::open(*model, "rows"), &cancelled).error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("read_all gives every value of a source, in order, on several threads", "[stats]") {
    test::TempDir dir;
    const std::vector<float> values = test::test_signal((3u << 20) + 5, 4);
    test::write_fixture_model(dir.file("r.gguf"), {{"r", GGML_TYPE_F32, {values.size()}, values}});
    auto model = open_gguf(dir.file("r.gguf"));
    auto view = TensorView::open(*model, 0);
    for (unsigned threads : {1u, 2u}) {
        auto all = read_all(*view, nullptr, threads);
        REQUIRE(all.ok());
        CHECK(*all == values);
    }
    JobContext cancelled;
    cancelled.cancel();
    CHECK(read_all(*view, &cancelled).error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("comparison names the worst quantization blocks with their row and column", "[stats][compare]") {
    test::TempDir dir;
    std::vector<float> values = test::test_signal(64 * 16, 9);
    std::vector<float> shifted = values;
    for (size_t i = 5 * 32; i < 6 * 32; ++i) shifted[i] += 1.0f;  // block 5: row 2, columns 32..63
    test::write_fixture_model(
        dir.file("b.gguf"),
        {{"ref", GGML_TYPE_F32, {64, 16}, shifted}, {"q8", GGML_TYPE_Q8_0, {64, 16}, values}, {"f32", GGML_TYPE_F32, {64, 16}, values}});
    auto model = open_gguf(dir.file("b.gguf"));
    auto ref = TensorView::open(*model, "ref");
    auto q8 = TensorView::open(*model, "q8");
    auto c = compare_sources(*ref, *q8, 64, 3, nullptr, 0, 0.0, 1.0, comparison_block_length(ref->block_length(), q8->block_length()));
    REQUIRE(c.ok());
    CHECK(c->block_length == 32);
    REQUIRE(c->worst_blocks.size() == 3);
    CHECK(c->worst_blocks[0].block == 5);
    CHECK(c->worst_blocks[0].row == 2);
    CHECK(c->worst_blocks[0].column == 32);
    CHECK(c->worst_blocks[0].rmse == Approx(1.0).margin(0.01));
    CHECK(c->worst_blocks[1].rmse < 0.01);
    CHECK(c->worst_rows[0].row == 2);
    // Two element-wise tensors have no blocks, and neither has a block that does not divide rows.
    auto plain = compare_sources(*ref, *TensorView::open(*model, "f32"), 64, 3, nullptr, 0, 0.0, 1.0, 1);
    CHECK(compare_sources(*ref, *q8, 64, 3, nullptr, 0, 0.0, 1.0, 48)->block_length == 0);
    CHECK(plain->block_length == 0);
    CHECK(plain->worst_blocks.empty());
}

TEST_CASE("a zero min or max is +0 on every route, whichever signs of zero the tensor holds", "[stats]") {
    test::TempDir dir;
    const uint64_t n = 4096;
    // -0 first, then +0 and positive values; and the same mirrored, so that zero is the max.
    std::vector<float> up(n), down(n), negative_zeros(n, -0.0f);
    for (uint64_t i = 0; i < n; ++i) up[i] = i % 3 == 0 ? (i % 2 == 0 ? -0.0f : 0.0f) : static_cast<float>(i % 97) / 97.0f;
    for (uint64_t i = 0; i < n; ++i) down[i] = -up[i];
    std::vector<test::FixtureTensor> tensors;
    for (auto [type, name] : {std::pair{GGML_TYPE_F32, "f32"},
                              {GGML_TYPE_F16, "f16"},
                              {GGML_TYPE_BF16, "bf16"},
                              {GGML_TYPE_Q4_0, "q4_0"},
                              {GGML_TYPE_Q8_0, "q8_0"}}) {
        tensors.push_back({std::string(name) + "_up", static_cast<uint32_t>(type), {n}, up});
        tensors.push_back({std::string(name) + "_down", static_cast<uint32_t>(type), {n}, down});
        tensors.push_back({std::string(name) + "_negative_zeros", static_cast<uint32_t>(type), {n}, negative_zeros});
    }
    test::write_fixture_model(dir.file("z.gguf"), tensors);
    auto model = open_gguf(dir.file("z.gguf"));
    REQUIRE(model.ok());
    bool held_negative_zero_min = false;
    for (const auto& t : tensors) {
        INFO(t.name);
        auto view = TensorView::open(*model, t.name);
        REQUIRE(view.ok());
        std::vector<float> decoded(n);
        REQUIRE(view->read(0, n, decoded.data()).ok());
        const float least = *std::min_element(decoded.begin(), decoded.end());
        // Q4_0 stores -0 where its negative step (the value of greatest magnitude is positive) meets code 8.
        if (t.name == "q4_0_up")
            held_negative_zero_min =
                std::count_if(decoded.begin(), decoded.end(), [](float x) { return x == 0 && std::signbit(x); }) > 0 && least == 0;
        for (unsigned threads : {1u, 2u}) {
            auto s = compute_stats_and_histogram(*view, 16, nullptr, threads);
            REQUIRE(s.ok());
            const double zero_end = t.name.ends_with("_down") ? s->stats.max : s->stats.min;
            CHECK(zero_end == 0);
            CHECK_FALSE(std::signbit(zero_end));
            if (t.name.ends_with("_negative_zeros")) CHECK_FALSE(std::signbit(s->stats.max));
        }
    }
    CHECK(held_negative_zero_min);
}
