// Statistics of tensors stored as 8- or 16-bit codes (F16, BF16, I8, U8, F8) count codes instead
// of decoding values; every figure must equal the one computed from the decoded values.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <cmath>
#include <limits>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::vector<float> decoded(const TensorView& view) {
    std::vector<float> v(view.size());
    REQUIRE(view.read(0, v.size(), v.data()).ok());
    return v;
}

// The code path (view) against the decode path (the same values in a VectorSource).
void require_same_figures(const TensorView& view, uint32_t bins, unsigned threads) {
    const std::vector<float> values = decoded(view);
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
    auto ranged_a = compute_histogram(view, bins, std::make_pair(-0.25, 0.5), nullptr, threads);
    auto ranged_b = compute_histogram(plain, bins, std::make_pair(-0.25, 0.5), nullptr, threads);
    REQUIRE(ranged_a.ok());
    CHECK(ranged_a->counts == ranged_b->counts);
    CHECK(ranged_a->below == ranged_b->below);
    CHECK(ranged_a->above == ranged_b->above);
}

}  // namespace

TEST_CASE("F16 and BF16 statistics count codes and equal those of the decoded values", "[stats]") {
    test::TempDir dir;
    // Over two million values, so that several chunks of codes are counted on two threads.
    auto values = test::test_signal((2u << 20) + 12345, 11);
    values[3] = std::numeric_limits<float>::quiet_NaN();
    values[4] = std::numeric_limits<float>::infinity();
    values[5] = -0.0f;
    values[6] = 0.0f;
    values[1500000] = 1e6f;   // beyond F16: stored as +Inf there, finite in BF16
    test::write_fixture_model(dir.file("c.gguf"), {{"f16", GGML_TYPE_F16, {values.size()}, values},
                                                   {"bf16", GGML_TYPE_BF16, {values.size()}, values},
                                                   {"q8", GGML_TYPE_Q8_0, {1024}, std::vector<float>(values.begin(), values.begin() + 1024)}});
    auto model = open_gguf(dir.file("c.gguf"));
    for (const char* name : {"f16", "bf16"}) {
        auto view = TensorView::open(*model, name);
        REQUIRE(view.ok());
        const std::vector<float> table = view->code_values();
        REQUIRE(table.size() == 65536);
        CHECK(table[std::string(name) == "f16" ? 0x3C00 : 0x3F80] == 1.0f);   // 1.0 in F16 and in BF16
        for (uint32_t bins : {1u, 7u, 256u})
            for (unsigned threads : {1u, 2u}) require_same_figures(*view, bins, threads);
        auto s = compute_stats(*view, nullptr, 2);
        CHECK(s->nan == 1);
        CHECK(s->inf == (std::string(name) == "f16" ? 2 : 1));
        CHECK(s->zeros >= 2);
        JobContext cancelled;
        cancelled.cancel();
        CHECK(compute_stats(*view, &cancelled).error().code == "E_CANCELLED");
    }
    auto q8 = TensorView::open(*model, "q8");
    CHECK(q8->code_values().empty());
    std::vector<uint16_t> codes(32);
    CHECK(q8->read_codes(0, 32, codes.data()).error().code == "E_UNSUPPORTED_TYPE");
}

TEST_CASE("8-bit codes: one expert of an I8 tensor, and U8 and F8 tensors", "[stats]") {
    std::vector<uint8_t> experts(3 * 4 * 5), bytes(200), fp8(256);
    for (size_t i = 0; i < experts.size(); ++i) experts[i] = static_cast<uint8_t>(static_cast<int8_t>(i * 4 - 120));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 % 251);
    for (size_t i = 0; i < fp8.size(); ++i) fp8[i] = static_cast<uint8_t>(i);   // every E4M3 code, NaN included
    test::SafetensorsBuilder sb;
    sb.tensor("experts", "I8", "[3,4,5]", experts).tensor("u8", "U8", "[200]", bytes).tensor("e4m3", "F8_E4M3", "[256]", fp8);
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    auto all = TensorView::open(m, "experts");
    auto second = all->slice(1);
    REQUIRE(second.ok());
    REQUIRE(second->code_values().size() == 256);
    std::vector<uint16_t> codes(20);
    REQUIRE(second->read_codes(0, 20, codes.data()).ok());
    CHECK(codes[0] == experts[20]);   // the second expert's first byte, widened
    CHECK(codes[19] == experts[39]);
    auto s = compute_stats(*second);
    CHECK(s->count == 20);
    CHECK(s->min == -40.0);   // i = 20: 20 * 4 - 120
    CHECK(s->max == 36.0);    // i = 39
    CHECK(s->mean == Approx(-2.0));
    for (uint32_t bins : {1u, 256u}) {
        require_same_figures(*second, bins, 2);
        require_same_figures(*TensorView::open(m, "u8"), bins, 2);
        require_same_figures(*TensorView::open(m, "e4m3"), bins, 1);
    }
    auto e4m3 = compute_stats(*TensorView::open(m, "e4m3"));
    CHECK(e4m3->nan == 2);   // 0x7F and 0xFF
    CHECK(e4m3->max == 448.0);
    CHECK(e4m3->min == -448.0);
}
