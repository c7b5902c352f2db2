// Analyses of tensors of any claimed size stay within the analysis memory bound
// (analysis_memory.h): rows longer than a chunk are pieced together, series of very many rows or
// blocks are pooled or sampled, and a 1 TiB sparse tensor is read in chunks until cancelled.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "memory_watch.h"
#include "mlens/analysis/model_diff.h"
#include "mlens/analysis/requant.h"
#include "mlens/analysis/tensor_compare.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/row_series.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/util/analysis_memory.h"
#include "model_fixture.h"
#include "sparse_models.h"
#include "test_paths.h"

using namespace mlens;

namespace {

template <typename T>
std::optional<ErrorCode> code_of(const Result<T>& r) {
    return r ? std::nullopt : std::optional<ErrorCode>(r.error().code);
}

}  // namespace

TEST_CASE("a comparison pieces together the error of rows that span chunks", "[bounded][compare]") {
    // Rows of 70,007 values (longer than a chunk, so every row spans two or three), blocks of 7.
    const uint64_t row = 70007, rows = 33, block = 7, n = row * rows;
    std::vector<float> a = test::test_signal(n, 11), b(n);
    for (uint64_t i = 0; i < n; ++i) b[i] = a[i] + 1e-3f * static_cast<float>(std::sin(static_cast<double>(i) * 0.11));
    for (uint64_t i = 0; i < 5000; ++i) b[20 * row + 65000 + i] += 0.01f;  // row 20 across a chunk boundary
    b[7 * row + 3] += 0.5f;  // the worst block: row 7, block 0
    a[12 * row + 9] = std::numeric_limits<float>::quiet_NaN();
    std::vector<double> row_err2(rows, 0.0), block_err2(n / block, 0.0);
    std::vector<uint64_t> row_finite(rows, 0), block_finite(n / block, 0);
    double row_max[33] = {};
    for (uint64_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i])) continue;
        const double d = static_cast<double>(a[i]) - b[i];
        row_err2[i / row] += d * d;
        block_err2[i / block] += d * d;
        ++row_finite[i / row];
        ++block_finite[i / block];
        row_max[i / row] = std::max(row_max[i / row], std::fabs(d));
    }
    std::vector<std::pair<double, uint64_t>> rows_ranked, blocks_ranked;
    for (uint64_t r = 0; r < rows; ++r) rows_ranked.push_back({-std::sqrt(row_err2[r] / row_finite[r]), r});
    for (uint64_t k = 0; k < n / block; ++k) blocks_ranked.push_back({-std::sqrt(block_err2[k] / block_finite[k]), k});
    std::sort(rows_ranked.begin(), rows_ranked.end());
    std::sort(blocks_ranked.begin(), blocks_ranked.end());
    for (unsigned threads : {1u, 2u}) {
        auto c = compare_sources(VectorSource(a), VectorSource(b), row, 6, nullptr, threads, 0.0, 1.0, block);
        REQUIRE(c.ok());
        CHECK(c->count == n - 1);
        REQUIRE(c->worst_rows.size() == 6);
        REQUIRE(c->worst_blocks.size() == 6);
        CHECK(c->worst_rows[0].row == 20);
        CHECK(c->worst_rows[1].row == 7);
        for (size_t k = 0; k < 6; ++k) {
            const uint64_t r = rows_ranked[k].second;
            CHECK(c->worst_rows[k].row == r);
            CHECK(c->worst_rows[k].rmse == Approx(-rows_ranked[k].first).epsilon(1e-10));
            CHECK(c->worst_rows[k].max_abs == Approx(row_max[r]).epsilon(1e-12));
            const uint64_t blk = blocks_ranked[k].second;
            CHECK(c->worst_blocks[k].block == blk);
            CHECK(c->worst_blocks[k].row == blk * block / row);
            CHECK(c->worst_blocks[k].column == blk * block % row);
            CHECK(c->worst_blocks[k].rmse == Approx(-blocks_ranked[k].first).epsilon(1e-10));
        }
    }
}

TEST_CASE("rows longer than one read are requantized in whole blocks, bit for bit as whole rows", "[bounded][requant]") {
    const uint64_t row = 2 * kMaxReadUnit, rows = 2, n = row * rows;
    const std::vector<float> values = test::test_signal(n, 12);
    VectorSource reference(values);
    int checked = 0;
    for (int id = 0; id < GGML_TYPE_COUNT; ++id) {
        const auto type = static_cast<ggml_type>(id);
        auto source = requantized_source(reference, row, id);
        if (!source) continue;
        // Reads of about 3,000 values: pieces of rows that start and end anywhere between blocks.
        const uint64_t piece = (*source)->chunk_length(3000);
        CHECK(piece < row);
        std::vector<float> read(n);
        for (uint64_t first = 0; first < n; first += piece)
            REQUIRE((*source)->read(first, std::min(piece, n - first), read.data() + first).ok());
        std::vector<uint8_t> q(ggml_row_size(type, static_cast<int64_t>(row)) * rows);
        ggml_quantize_chunk(type, values.data(), q.data(), 0, rows, static_cast<int64_t>(row), nullptr);
        std::vector<float> expected(n);
        ggml_get_type_traits(type)->to_float(q.data(), expected.data(), static_cast<int64_t>(n));
        INFO(ggml_type_name(type));
        CHECK(std::memcmp(read.data(), expected.data(), n * sizeof(float)) == 0);
        ++checked;
    }
    CHECK(checked >= 20);
}

TEST_CASE("row series of more rows than a series keeps pool runs of consecutive rows", "[bounded][stats]") {
    test::TempDir dir;
    const uint64_t rows = 3 * kMaxSeriesEntries / 2 + 1;  // two rows per entry, one in the last
    auto offsets = test::write_sparse_gguf(dir.file("rows.gguf"), {{"w", GGML_TYPE_F16, {4, rows}}});
    REQUIRE(offsets.size() == 1);
    // Row 5 holds one 3.0 (F16 0x4200), row rows-1 (alone in the last entry) one -2.0 (0xC000).
    REQUIRE(test::patch_file(dir.file("rows.gguf"), offsets[0] + (5 * 4 + 1) * 2, {0x00, 0x42}));
    REQUIRE(test::patch_file(dir.file("rows.gguf"), offsets[0] + ((rows - 1) * 4 + 2) * 2, {0x00, 0xC0}));
    auto model = open_gguf(dir.file("rows.gguf"));
    auto r = row_series(*TensorView::open(*model, "w"), nullptr, 2);
    REQUIRE(r.ok());
    const ScaleSeries& rms = (*r)[0];
    const ScaleSeries& absmax = (*r)[1];
    REQUIRE(rms.values.size() == (rows + 1) / 2);
    CHECK(rms.values_per_entry == 8);
    CHECK(rms.values[2] == static_cast<float>(std::sqrt(9.0 / 8.0)));  // rows 4 and 5
    CHECK(absmax.values[2] == 3.0f);
    CHECK(rms.values.back() == static_cast<float>(std::sqrt(4.0 / 4.0)));  // the last row alone
    CHECK(absmax.values.back() == 2.0f);
    CHECK(absmax.values[1] == 0.0f);
}

TEST_CASE("block scales of more blocks than a series keeps are a sample of every k-th block", "[bounded][stats]") {
    test::TempDir dir;
    const uint64_t blocks = 2 * kMaxSeriesEntries;
    auto offsets = test::write_sparse_gguf(dir.file("q.gguf"), {{"w", GGML_TYPE_Q4_0, {32 * blocks}}});
    REQUIRE(offsets.size() == 1);
    // d of block 0 = 1.0, block 2 = 2.0 (both sampled) and block 3 = 5.0 (not sampled).
    REQUIRE(test::patch_file(dir.file("q.gguf"), offsets[0], {0x00, 0x3C}));
    REQUIRE(test::patch_file(dir.file("q.gguf"), offsets[0] + 2 * 18, {0x00, 0x40}));
    REQUIRE(test::patch_file(dir.file("q.gguf"), offsets[0] + 3 * 18, {0x00, 0x45}));
    auto model = open_gguf(dir.file("q.gguf"));
    auto scales = block_scales(*TensorView::open(*model, "w"));
    REQUIRE(scales.ok());
    const ScaleSeries* d = scales->find("d");
    REQUIRE(d != nullptr);
    CHECK(d->stride == 2);
    CHECK(d->values_per_entry == 32);
    REQUIRE(d->values.size() == kMaxSeriesEntries);
    CHECK(d->values[0] == 1.0f);
    CHECK(d->values[1] == 2.0f);
    CHECK(*std::max_element(d->values.begin(), d->values.end()) == 2.0f);
}

TEST_CASE("a 1 TiB sparse tensor of 2^37-value rows is analysed in bounded memory until cancelled", "[bounded]") {
    test::TempDir dir;
    // F16 [2^37, 4]: 2^39 values, 2^40 bytes of data in a hole.
    const uint64_t row = uint64_t{1} << 37;
    REQUIRE(test::write_sparse_gguf(dir.file("huge.gguf"), {{"w", GGML_TYPE_F16, {row, 4}}}).size() == 1);
    auto model = open_gguf(dir.file("huge.gguf"));
    auto view = TensorView::open(*model, "w");
    REQUIRE(view.ok());
    REQUIRE(view->size() == 4 * row);

    std::vector<std::pair<std::string, std::function<std::optional<ErrorCode>(JobContext*)>>> analyses = {
        {"compare", [&](JobContext* job) { return code_of(compare_sources(*view, *view, row, 10, job)); }},
        {"requantize",
         [&](JobContext* job) {
             return code_of(requantize(*view, row, {GGML_TYPE_Q4_0, GGML_TYPE_Q4_K}, job));
         }},
        {"compare with a requantized copy kept between reads",
         [&](JobContext* job) {
             // The copy is far larger than the bound: it quantizes again at every read instead.
             auto kept = requantized_source(*view, row, GGML_TYPE_Q4_K, true);
             return kept ? code_of(compare_sources(*view, **kept, row, 10, job)) : std::optional<ErrorCode>(kept.error().code);
         }},
        {"row series", [&](JobContext* job) { return code_of(row_series(*view, job)); }},
        {"stats", [&](JobContext* job) { return code_of(compute_stats(*view, job)); }},
        {"histogram", [&](JobContext* job) { return code_of(compute_histogram(*view, 64, std::make_pair(-1.0, 1.0), job)); }},
        {"model error",
         [&](JobContext* job) {
             const Model& m = *model;
             return code_of(compare_models(m, m, pair_tensors(m, m), job));
         }},
        {"numeric diff",
         [&](JobContext* job) {
             DiffOptions options;
             options.numeric = true;
             return code_of(diff_models(*model, *model, options, job));
         }},
    };
    for (const auto& [name, run] : analyses) {
        INFO(name);
        std::optional<ErrorCode> code;
        [[maybe_unused]] const uint64_t grew = test::run_cancelled_after_progress([&](JobContext* job) { code = run(job); });
        CHECK(code == ErrorCode::E_CANCELLED);
#ifndef __SANITIZE_ADDRESS__
        CHECK(grew < kAnalysisMemoryBound);
#endif
    }
}
