// TensorReport gives the same figures as the separate analyses, the row series summed in 16 lanes;
// a side plan counts its edits by kind.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "build_paths.h"
#include "mlens/analysis/tensor_report.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/row_series.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "read_counting_source.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// sqrt(mean x²) over the finite values of values[first, first + n), in double, value i's square
// added to lane i % 16 and the lanes added in order, and their largest |x|: the row series'
// definition.
std::pair<float, float> rms_and_absmax(const std::vector<float>& values, uint64_t first, uint64_t n) {
    double lane[16] = {};
    float absmax = 0;
    uint64_t finite = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const float x = values[first + i];
        if (!std::isfinite(x)) continue;
        lane[i % 16] += static_cast<double>(x) * x;
        absmax = std::max(absmax, std::fabs(x));
        ++finite;
    }
    double squares = 0;
    for (double l : lane) squares += l;
    return {static_cast<float>(std::sqrt(squares / static_cast<double>(finite))), absmax};
}

// The counts, zeros, extremes and percentiles of two statistics, which every route gives exactly.
void check_same_counts(const TensorStats& a, const TensorStats& b) {
    CHECK(a.count == b.count);
    CHECK(a.finite == b.finite);
    CHECK(a.nan == b.nan);
    CHECK(a.inf == b.inf);
    CHECK(a.zeros == b.zeros);
    CHECK(a.min == b.min);
    CHECK(a.max == b.max);
    CHECK(a.percentiles == b.percentiles);
}

void check_same_stats(const TensorStats& a, const TensorStats& b) {
    check_same_counts(a, b);
    CHECK(a.mean == b.mean);
    CHECK(a.std == b.std);
    CHECK(a.mean_abs == b.mean_abs);
    CHECK(a.kurtosis == b.kurtosis);
}

// Each row of 256 values scaled by its index, so every row's RMS differs.
std::vector<float> scaled_rows(uint64_t rows, uint64_t length) {
    std::vector<float> v = test::test_signal(rows * length, 3);
    for (uint64_t i = 0; i < v.size(); ++i) v[i] *= 0.25f + static_cast<float>(i / length) / 8.0f;
    return v;
}

}  // namespace

TEST_CASE("tensor_report gives the statistics, block scales and row series of the separate analyses", "[tensor-report]") {
    test::TempDir dir;
    // 48 rows of 256: the statistics are compute_stats' own, bit for bit, on every route (Q8_0's
    // step tables, Q6_K's scaled groups, F16's codes).
    const std::vector<float> values = scaled_rows(48, 256);
    test::write_fixture_model(dir.file("r.gguf"),
                              {{"q8_0", GGML_TYPE_Q8_0, {256, 48}, values},
                               {"q6_k", GGML_TYPE_Q6_K, {256, 48}, values},
                               {"f16", GGML_TYPE_F16, {256, 48}, values}});
    auto model = open_gguf(dir.file("r.gguf"));
    REQUIRE(model.ok());
    for (const char* name : {"q8_0", "q6_k", "f16"}) {
        INFO(name);
        auto view = TensorView::open(*model, name);
        REQUIRE(view.ok());
        auto decoded = read_all(*view);
        REQUIRE(decoded.ok());
        std::vector<TensorReportStep> steps;
        TensorReportOptions options;
        options.on_step = [&](TensorReportStep s) { steps.push_back(s); };
        auto report = tensor_report(*view, options);
        REQUIRE(report.ok());
        CHECK(steps ==
              std::vector<TensorReportStep>{TensorReportStep::statistics, TensorReportStep::row_series, TensorReportStep::block_scales,
                                            TensorReportStep::series_statistics});
        REQUIRE(report->stats);
        check_same_stats(*report->stats, *compute_stats(*view));
        CHECK(report->histogram.counts.empty());

        // Rows: each entry is one row, its RMS and max |x| summed as row_series sums them.
        REQUIRE(report->rows.size() == 2);
        CHECK(report->rows[0].name == "row_rms");
        CHECK(report->rows[1].name == "row_absmax");
        CHECK(report->rows[0].values_per_entry == 256);
        auto separate = row_series(*view);
        REQUIRE(separate.ok());
        std::vector<float> rms, absmax;
        for (uint64_t r = 0; r < 48; ++r) {
            const auto [row_rms, row_absmax] = rms_and_absmax(*decoded, r * 256, 256);
            rms.push_back(row_rms);
            absmax.push_back(row_absmax);
        }
        CHECK((*separate)[0].values == rms);
        CHECK((*separate)[1].values == absmax);
        check_same_stats(report->rows[0].stats, *compute_stats(VectorSource(rms)));
        check_same_stats(report->rows[1].stats, *compute_stats(VectorSource(absmax)));
        CHECK(report->rows[1].stats.max == *std::max_element(absmax.begin(), absmax.end()));

        // Block scales: the decoded series and their statistics; F16 stores none.
        auto scales = block_scales(*view);
        if (std::string(name) == "f16") {
            REQUIRE(report->block_scales_error);
            CHECK(report->block_scales_error->code == ErrorCode::E_UNSUPPORTED_TYPE);
            CHECK(report->block_scales.empty());
            continue;
        }
        CHECK_FALSE(report->block_scales_error);
        REQUIRE(scales.ok());
        REQUIRE(report->block_scales.size() == scales->series.size());
        for (size_t i = 0; i < scales->series.size(); ++i) {
            CHECK(report->block_scales[i].name == scales->series[i].name);
            CHECK(report->block_scales[i].values_per_entry == scales->series[i].values_per_entry);
            CHECK(report->block_scales[i].stride == 1);
            check_same_stats(report->block_scales[i].stats, *compute_stats(VectorSource(scales->series[i].values)));
        }
        // Q8_0: one d per 32 values; Q6_K: d per 256 and a scale per 16.
        CHECK(report->block_scales[0].stats.count == (std::string(name) == "q8_0" ? 384u : 48u));
    }
}

TEST_CASE("tensor_report with histograms, without statistics, and cancelled", "[tensor-report]") {
    test::TempDir dir;
    const std::vector<float> values = scaled_rows(48, 256);
    test::write_fixture_model(dir.file("r.gguf"), {{"q8_0", GGML_TYPE_Q8_0, {256, 48}, values}});
    auto model = open_gguf(dir.file("r.gguf"));
    REQUIRE(model.ok());
    auto view = TensorView::open(*model, "q8_0");
    REQUIRE(view.ok());

    TensorReportOptions options;
    options.bins = 64;
    options.series_bins = 8;
    auto report = tensor_report(*view, options);
    REQUIRE(report.ok());
    auto both = compute_stats_and_histogram(*view, 64);
    REQUIRE(both.ok());
    check_same_stats(report->stats.value(), both->stats);
    CHECK(report->histogram.counts == both->histogram.counts);
    CHECK(report->histogram.lo == both->histogram.lo);
    CHECK(report->histogram.hi == both->histogram.hi);
    CHECK(report->histogram.total() == 48 * 256);
    auto rows = row_series(*view);
    REQUIRE(rows.ok());
    auto rms = compute_stats_and_histogram(VectorSource((*rows)[0].values), 8);
    REQUIRE(report->rows.size() == 2);
    CHECK(report->rows[0].histogram.counts == rms->histogram.counts);
    CHECK(report->rows[0].histogram.total() == 48);
    CHECK(report->block_scales[0].histogram.total() == 384);

    // Without statistics the rows are read alone; without scales and rows, nothing else is.
    options.statistics = false;
    std::vector<TensorReportStep> steps;
    options.on_step = [&](TensorReportStep s) { steps.push_back(s); };
    auto no_stats = tensor_report(*view, options);
    REQUIRE(no_stats.ok());
    CHECK_FALSE(no_stats->stats);
    REQUIRE(no_stats->rows.size() == 2);
    CHECK(no_stats->rows[0].histogram.counts == rms->histogram.counts);
    CHECK(steps.size() == 3);
    options.block_scales = options.row_series = false;
    steps.clear();
    auto nothing = tensor_report(*view, options);
    REQUIRE(nothing.ok());
    CHECK(nothing->rows.empty());
    CHECK(nothing->block_scales.empty());
    CHECK(steps.empty());

    JobContext cancelled;
    cancelled.cancel();
    CHECK(tensor_report(*view, {}, &cancelled).error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("tensor_report's rows over several chunks and one row longer than a chunk", "[tensor-report]") {
    test::TempDir dir;
    // Rows of 3000 values (chunks of whole rows) and one row of 200,000 (in pieces).
    const std::vector<float> rows = scaled_rows(100, 3000);
    std::vector<float> line(200000, 2.0f);
    line[123456] = -7.0f;
    test::write_fixture_model(dir.file("r.gguf"), {{"rows", GGML_TYPE_F32, {3000, 100}, rows}, {"line", GGML_TYPE_F32, {200000}, line}});
    auto model = open_gguf(dir.file("r.gguf"));
    REQUIRE(model.ok());
    auto report = tensor_report(*TensorView::open(*model, "rows"), {});
    REQUIRE(report.ok());
    CHECK(report->stats->count == 300000);
    CHECK(report->stats->min == *std::min_element(rows.begin(), rows.end()));
    CHECK(report->stats->max == *std::max_element(rows.begin(), rows.end()));
    REQUIRE(report->rows.size() == 2);
    REQUIRE(report->rows[0].stats.count == 100);
    std::vector<float> rms;
    for (uint64_t r = 0; r < 100; ++r) rms.push_back(rms_and_absmax(rows, r * 3000, 3000).first);
    check_same_stats(report->rows[0].stats, *compute_stats(VectorSource(rms)));

    auto long_row = tensor_report(*TensorView::open(*model, "line"), {});
    REQUIRE(long_row.ok());
    REQUIRE(long_row->rows.size() == 2);
    CHECK(long_row->rows[0].stats.count == 1);
    CHECK(long_row->rows[0].stats.min == Approx(std::sqrt((199999 * 4.0 + 49.0) / 200000)));
    CHECK(long_row->rows[1].stats.min == 7.0);
    // The long row is read in pieces of 65,536 values on several threads: its sum is each piece's,
    // added in the pieces' order, the same bits on every run.
    std::vector<float> noisy = test::test_signal(200000, 4);
    test::write_fixture_model(dir.file("n.gguf"), {{"line", GGML_TYPE_F32, {200000}, noisy}});
    auto noisy_model = open_gguf(dir.file("n.gguf"));
    REQUIRE(noisy_model.ok());
    double squares = 0;
    for (uint64_t at = 0; at < noisy.size(); at += 65536) {
        double lane[16] = {};
        for (uint64_t i = 0; i < std::min<uint64_t>(65536, noisy.size() - at); ++i)
            lane[i % 16] += static_cast<double>(noisy[at + i]) * noisy[at + i];
        double piece = 0;
        for (double l : lane) piece += l;
        squares += piece;
    }
    const auto want = static_cast<float>(std::sqrt(squares / 200000.0));
    for (int run = 0; run < 20; ++run) {
        auto rows = row_series(*TensorView::open(*noisy_model, "line"), nullptr, 1 + run % 3);
        REQUIRE(rows.ok());
        CHECK((*rows)[0].values == std::vector<float>{want});
    }
}

TEST_CASE("a side plan counts its edits by kind, data ops under data_op", "[compat]") {
    using namespace mlens::compat;
    SidePlan plan;
    CHECK(plan.counts() == EditCounts{});
    auto kv = [](EditKind k) {
        KvEdit e;
        e.kind = k;
        return e;
    };
    auto tensor = [](EditKind k) {
        TensorEdit e;
        e.kind = k;
        return e;
    };
    plan.kv_edits = {kv(EditKind::injected), kv(EditKind::injected), kv(EditKind::changed), kv(EditKind::removed)};
    plan.tensor_edits = {tensor(EditKind::renamed), tensor(EditKind::hidden), tensor(EditKind::retyped), tensor(EditKind::retyped)};
    plan.data_ops.resize(3);
    CHECK(plan.counts() == EditCounts{2, 1, 1, 1, 1, 2, 3});
    for (size_t k = 0; k < kEditKinds.size(); ++k) CHECK(static_cast<size_t>(kEditKinds[k]) == k);

    // The Ollama gemma3 demo file, as `mlens compat` summarizes it.
    auto model = open_gguf(std::string(MLENS_DEMO_DIR) + "/ollama-gemma3.gguf");
    REQUIRE(model.ok());
    const RewritePlan gemma3 = plan_compat(*model);
    CHECK(gemma3.text.counts() == EditCounts{6, 3, 0, 0, 23, 0, 0});
    CHECK(gemma3.clip.counts() == EditCounts{13, 1, 0, 19, 0, 2, 2});
}

TEST_CASE("tensor_report's statistics take each type's own route, decoding no value but on the decoded route", "[tensor-report][stats]") {
    test::TempDir dir;
    const uint64_t length = 256, rows = 64;
    const std::vector<float> values = test::test_signal(length * rows, 5);
    // Q8_0 whose every block has the same greatest |x| (one step: step tables), and Q8_0 whose
    // every block has its own (512 steps, past the tables' 256 for 16,384 values: scaled groups).
    float peak = 0;
    for (float v : values) peak = std::max(peak, std::fabs(v));
    std::vector<float> one_step = values, many_steps = values;
    for (uint64_t b = 0; b < values.size() / 32; ++b) {
        one_step[b * 32] = peak;
        for (uint64_t i = 0; i < 32; ++i) many_steps[b * 32 + i] *= std::exp2(static_cast<float>(b) / 100.0f);
    }
    const std::vector<std::pair<test::FixtureTensor, StatsRoute>> cases = {
        {{"q4_0", GGML_TYPE_Q4_0, {length, rows}, values}, StatsRoute::code_groups},
        {{"q5_0", GGML_TYPE_Q5_0, {length, rows}, values}, StatsRoute::code_groups},
        {{"iq4_xs", GGML_TYPE_IQ4_XS, {length, rows}, values}, StatsRoute::code_groups},
        {{"q4_k", GGML_TYPE_Q4_K, {length, rows}, values}, StatsRoute::code_groups},
        {{"q5_k", GGML_TYPE_Q5_K, {length, rows}, values}, StatsRoute::offset_groups},
        {{"q6_k", GGML_TYPE_Q6_K, {length, rows}, values}, StatsRoute::scaled_groups},
        {{"q8_0_one_step", GGML_TYPE_Q8_0, {length, rows}, one_step}, StatsRoute::step_tables},
        {{"q8_0_many_steps", GGML_TYPE_Q8_0, {length, rows}, many_steps}, StatsRoute::scaled_groups},
        {{"f16", GGML_TYPE_F16, {length, rows}, values}, StatsRoute::stored_codes},
        {{"bf16", GGML_TYPE_BF16, {length, rows}, values}, StatsRoute::stored_codes},
        {{"f32", GGML_TYPE_F32, {length, rows}, values}, StatsRoute::decoded},
    };
    std::vector<test::FixtureTensor> tensors;
    for (const auto& c : cases) tensors.push_back(c.first);
    test::write_fixture_model(dir.file("routes.gguf"), tensors);
    auto model = open_gguf(dir.file("routes.gguf"));
    REQUIRE(model.ok());
    for (const auto& [tensor, route] : cases) {
        INFO(tensor.name);
        auto view = TensorView::open(*model, tensor.name);
        REQUIRE(view.ok());
        TensorReportOptions options;
        options.bins = 256;
        options.block_scales = options.row_series = false;
        auto report = tensor_report(*view, options);
        REQUIRE(report.ok());
        REQUIRE(report->stats_route);
        CHECK(stats_route_name(*report->stats_route) == std::string(stats_route_name(route)));
        // The same route through a source that counts decoded reads: none but where it decodes.
        const test::ReadCountingSource counted(*view);
        auto direct = compute_stats_and_histogram(counted, 256);
        REQUIRE(direct.ok());
        CHECK(direct->route == route);
        CHECK((counted.reads() == 0) == (route != StatsRoute::decoded));
        // What `mlens stats` and the Weights panel say of the route agrees: no value decoded where
        // none was read.
        CHECK((std::string(stats_route_summary(route)).find("no value decoded") != std::string::npos) == (counted.reads() == 0));
        check_same_stats(*report->stats, direct->stats);
        CHECK(report->histogram.counts == direct->histogram.counts);
    }
}
