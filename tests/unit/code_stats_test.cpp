// Statistics take shortcuts: tensors stored as 8- or 16-bit codes (F16, BF16, I8, U8, F8) count
// codes instead of decoding values, block-quantized tensors of 4- and 5-bit codes (Q4_0, Q4_1,
// IQ4_NL, Q4_K, IQ4_XS, Q5_0, Q5_1, Q5_K, MLX affine int4) count each group's codes, those of a
// code times a step (Q6_K, Q8_0) bin each code times its step after a quick range, those of a
// code times a step plus an offset (Q5_K, MLX affine int8) likewise, and the other sources with a
// quick range sum and bin in one pass. Every figure must equal the one computed from the decoded
// values, the AVX-512 pass the one of the plain loops (reached through the internal
// scaled_group_stats.h), and a wrong quick range must not change any.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/mlx_quant.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "numpy_histogram.h"
#include "read_counting_source.h"
#include "safetensors_builder.h"
#include "scaled_group_stats.h"
#include "stats_agreement.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::vector<float> decoded(const TensorView& view) {
    std::vector<float> v(view.size());
    REQUIRE(view.read(0, v.size(), v.data()).ok());
    return v;
}

using test::require_same_figures;

void require_same_figures(const TensorView& view, uint32_t bins, unsigned threads) {
    require_same_figures(view, decoded(view), bins, threads);
}

// An Ollama/MLX affine tensor blob holding "w" (`rows` x `cols` values of `bits`-bit codes in
// groups of `group`), with its scales changed by `edit` before it is written.
Model mlx_affine_blob(uint32_t bits, uint64_t group, uint64_t rows, uint64_t cols, const std::vector<float>& values,
                      const std::function<void(MlxQuantized&)>& edit = {}) {
    auto q = mlx_quantize(MlxMode::affine, bits, group, values.data(), values.size());
    REQUIRE(q.ok());
    if (edit) edit(*q);
    std::vector<uint8_t> packed(q->packed.size() * 4), sc(q->scales.size() * 4), bi(q->biases.size() * 4);
    std::memcpy(packed.data(), q->packed.data(), packed.size());
    std::memcpy(sc.data(), q->scales.data(), sc.size());
    std::memcpy(bi.data(), q->biases.data(), bi.size());
    const std::string r = std::to_string(rows), groups = "[" + r + "," + std::to_string(cols / group) + "]";
    test::SafetensorsBuilder sb;
    sb.metadata("quant_type", "int" + std::to_string(bits)).metadata("group_size", std::to_string(group));
    sb.tensor("w", "U32", "[" + r + "," + std::to_string(cols * bits / 32) + "]", packed)
        .tensor("w.scale", "F32", groups, sc)
        .tensor("w.bias", "F32", groups, bi);
    Model m = read_safetensors(memory_source(sb.bytes()));
    describe_tensor_blobs(m);
    return m;
}

// A VectorSource that claims a quick range narrower than its values (as a ggml that rounds Q4_K
// differently would): statistics must notice and count again.
class WrongRangeSource final : public FloatSource {
public:
    explicit WrongRangeSource(const std::vector<float>& values) : m_inner(values) {}
    uint64_t size() const override { return m_inner.size(); }
    uint64_t granularity() const override { return 1; }
    Status read(uint64_t first, uint64_t count, float* out) const override { return m_inner.read(first, count, out); }
    Result<std::optional<ValueBounds>> quick_range(uint64_t, uint64_t) const override {
        return std::optional<ValueBounds>{ValueBounds{-0.5f, 0.5f}};
    }

private:
    VectorSource m_inner;
};

}  // namespace

TEST_CASE("F16 and BF16 statistics count codes and equal those of the decoded values", "[stats]") {
    test::TempDir dir;
    // Over two million values, so that several chunks of codes are counted on two threads.
    auto values = test::test_signal((2u << 20) + 12345, 11);
    values[3] = std::numeric_limits<float>::quiet_NaN();
    values[4] = std::numeric_limits<float>::infinity();
    values[5] = -0.0f;
    values[6] = 0.0f;
    values[1500000] = 1e6f;  // beyond F16: stored as +Inf there, finite in BF16
    test::write_fixture_model(dir.file("c.gguf"),
                              {{"f16", GGML_TYPE_F16, {values.size()}, values},
                               {"bf16", GGML_TYPE_BF16, {values.size()}, values},
                               {"q8", GGML_TYPE_Q8_0, {1024}, std::vector<float>(values.begin(), values.begin() + 1024)}});
    auto model = open_gguf(dir.file("c.gguf"));
    for (const char* name : {"f16", "bf16"}) {
        auto view = TensorView::open(*model, name);
        REQUIRE(view.ok());
        const std::vector<float> table = view->code_values();
        REQUIRE(table.size() == 65536);
        CHECK(table[std::string(name) == "f16" ? 0x3C00 : 0x3F80] == 1.0f);  // 1.0 in F16 and in BF16
        for (uint32_t bins : {1u, 7u, 256u})
            for (unsigned threads : {1u, 2u}) require_same_figures(*view, bins, threads);
        auto s = compute_stats(*view, nullptr, 2);
        CHECK(s->nan == 1);
        CHECK(s->inf == (std::string(name) == "f16" ? 2 : 1));
        CHECK(s->zeros >= 2);
        JobContext cancelled;
        cancelled.cancel();
        CHECK(compute_stats(*view, &cancelled).error().code == ErrorCode::E_CANCELLED);
    }
    auto q8 = TensorView::open(*model, "q8");
    CHECK(q8->code_values().empty());
    std::vector<uint16_t> codes(32);
    CHECK(q8->read_codes(0, 32, codes.data()).error().code == ErrorCode::E_UNSUPPORTED_TYPE);
}

TEST_CASE("8-bit codes: one expert of an I8 tensor, and U8 and F8 tensors", "[stats]") {
    std::vector<uint8_t> experts(3 * 4 * 5), bytes(200), fp8(256);
    for (size_t i = 0; i < experts.size(); ++i) experts[i] = static_cast<uint8_t>(static_cast<int8_t>(i * 4 - 120));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 % 251);
    for (size_t i = 0; i < fp8.size(); ++i) fp8[i] = static_cast<uint8_t>(i);  // every E4M3 code, NaN included
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
    CHECK(codes[0] == experts[20]);  // the second expert's first byte, widened
    CHECK(codes[19] == experts[39]);
    auto s = compute_stats(*second);
    CHECK(s->count == 20);
    CHECK(s->min == -40.0);  // i = 20: 20 * 4 - 120
    CHECK(s->max == 36.0);  // i = 39
    CHECK(s->mean == Approx(-2.0));
    for (uint32_t bins : {1u, 256u}) {
        require_same_figures(*second, bins, 2);
        require_same_figures(*TensorView::open(m, "u8"), bins, 2);
        require_same_figures(*TensorView::open(m, "e4m3"), bins, 1);
    }
    auto e4m3 = compute_stats(*TensorView::open(m, "e4m3"));
    CHECK(e4m3->nan == 2);  // 0x7F and 0xFF
    CHECK(e4m3->max == 448.0);
    CHECK(e4m3->min == -448.0);
}

TEST_CASE("block-quantized tensors give their exact range from codes and scales", "[stats]") {
    test::TempDir dir;
    const uint64_t ne0 = 1024, rows = 40;
    const ggml_type with_range[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
                                    GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS};
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : with_range)
        tensors.push_back({ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t)});
    tensors.push_back({"q3_K", GGML_TYPE_Q3_K, {ne0, rows}, test::test_signal(ne0 * rows, 3)});
    tensors.push_back({"f32", GGML_TYPE_F32, {ne0, rows}, test::test_signal(ne0 * rows, 4)});
    test::write_fixture_model(dir.file("r.gguf"), tensors);
    auto model = open_gguf(dir.file("r.gguf"));
    REQUIRE(model.ok());
    for (ggml_type t : with_range) {
        INFO(ggml_type_name(t));
        auto view = TensorView::open(*model, ggml_type_name(t));
        REQUIRE(view.ok());
        const std::vector<float> values = decoded(*view);
        // The whole tensor, and a range of blocks in the middle (rows 3 to 7).
        for (auto [first, count] : {std::pair<uint64_t, uint64_t>{0, values.size()}, {3 * ne0, 5 * ne0}}) {
            auto r = view->quick_range(first, count);
            REQUIRE(r.ok());
            REQUIRE(r->has_value());
            const auto [lo, hi] = std::minmax_element(values.begin() + first, values.begin() + first + count);
            CHECK((*r)->min == *lo);
            CHECK((*r)->max == *hi);
        }
        CHECK(view->quick_range(1, 32).error().code == ErrorCode::E_RANGE);  // not on a block boundary
        // On one and two threads, over several chunks: the one-pass figures are the plain ones.
        for (unsigned threads : {1u, 2u}) require_same_figures(*view, 256, threads);
    }
    for (const char* none : {"q3_K", "f32"}) {
        auto r = TensorView::open(*model, none)->quick_range(0, ne0);
        REQUIRE(r.ok());
        CHECK(!r->has_value());
    }
}

TEST_CASE("a block whose scale is infinite or NaN has no quick range", "[stats]") {
    test::TempDir dir;
    const uint64_t ne0 = 256, rows = 4;
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : {GGML_TYPE_Q8_0, GGML_TYPE_Q4_K})
        tensors.push_back({ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t)});
    test::write_fixture_model(dir.file("s.gguf"), tensors);
    std::vector<uint8_t> bytes = test::read_whole_file(dir.file("s.gguf"));
    {
        auto model = open_gguf(dir.file("s.gguf"));
        REQUIRE(model.ok());
        // Q8_0: the first block's d becomes +Inf; Q4_K: the first block's dmin becomes NaN.
        const uint64_t q8 = model->tensors[0].data_offset, q4k = model->tensors[1].data_offset;
        bytes[q8] = 0x00;
        bytes[q8 + 1] = 0x7C;
        bytes[q4k + 2] = 0x00;
        bytes[q4k + 3] = 0x7E;
    }
    test::write_whole_file(dir.file("s.gguf"), bytes);
    auto model = open_gguf(dir.file("s.gguf"));
    REQUIRE(model.ok());
    for (const char* name : {"q8_0", "q4_K"}) {
        INFO(name);
        auto view = TensorView::open(*model, name);
        REQUIRE(view.ok());
        auto whole = view->quick_range(0, view->size());
        REQUIRE(whole.ok());
        CHECK(!whole->has_value());
        // Rows without the broken block keep their exact range.
        const std::vector<float> values = decoded(*view);
        auto later = view->quick_range(ne0, 3 * ne0);
        REQUIRE(later.ok());
        REQUIRE(later->has_value());
        const auto [lo, hi] = std::minmax_element(values.begin() + ne0, values.end());
        CHECK((*later)->min == *lo);
        CHECK((*later)->max == *hi);
        // Statistics still count the NaN and infinite values and agree with the decoded ones,
        // which they decode.
        for (unsigned threads : {1u, 2u}) require_same_figures(*view, 256, threads);
        auto stats = compute_stats_and_histogram(*view, 256);
        REQUIRE(stats.ok());
        CHECK(stats->route == StatsRoute::decoded);
    }
}

TEST_CASE("MLX affine groups give their range, whatever the sign of the scale", "[stats]") {
    // Two 4-bit groups of 8 codes (4 bytes each) and two 8-bit groups of 4 codes.
    const uint8_t four[] = {0x21, 0x43, 0x65, 0x87, 0xFF, 0x00, 0x3C, 0xA5};
    const float scales[] = {0.5f, -2.0f}, biases[] = {1.0f, 0.25f};
    auto r = mlx_affine_range(4, 8, four, scales, biases, 2);
    REQUIRE(r.has_value());
    // Group 0: codes 1..8 -> 1.5 .. 5.0; group 1: codes 0..15, scale -2 -> -29.75 .. 0.25.
    CHECK(r->min == -29.75f);
    CHECK(r->max == 5.0f);
    const uint8_t eight[] = {10, 200, 30, 40, 0, 255, 7, 9};
    r = mlx_affine_range(8, 4, eight, scales, biases, 2);
    REQUIRE(r.has_value());
    CHECK(r->min == 255 * -2.0f + 0.25f);
    CHECK(r->max == 200 * 0.5f + 1.0f);
    const float nan_scale[] = {0.5f, std::numeric_limits<float>::quiet_NaN()};
    CHECK(!mlx_affine_range(8, 4, eight, nan_scale, biases, 2).has_value());
    // Through a tensor blob: the range and the one-pass statistics of an int4 g32 tensor.
    const Model m = mlx_affine_blob(4, 32, 96, 64, test::test_signal(64 * 96, 5));
    auto view = TensorView::open(m, "w");
    REQUIRE(view.ok());
    const std::vector<float> all = decoded(*view);
    auto range = view->quick_range(0, all.size());
    REQUIRE(range.ok());
    REQUIRE(range->has_value());
    CHECK((*range)->min == *std::min_element(all.begin(), all.end()));
    CHECK((*range)->max == *std::max_element(all.begin(), all.end()));
    require_same_figures(*view, 64, 2);
}

namespace {

// compute_histogram of `values` (auto range, then [lo, hi]) against numpy's counts.
void require_numpy_bins(const std::vector<float>& values, uint32_t bins, std::pair<double, double> range) {
    const VectorSource source(values);
    for (unsigned threads : {1u, 2u}) {
        auto whole = compute_histogram(source, bins, std::nullopt, nullptr, threads);
        REQUIRE(whole.ok());
        const bool numpy_bins = whole->counts == test::numpy_histogram(values, whole->lo, whole->hi, bins).counts;
        CHECK(numpy_bins);
        auto ranged = compute_histogram(source, bins, range, nullptr, threads);
        REQUIRE(ranged.ok());
        const test::NumpyHistogram want = test::numpy_histogram(values, range.first, range.second, bins);
        const bool ranged_numpy_bins = ranged->counts == want.counts;
        CHECK(ranged_numpy_bins);
        CHECK(ranged->below == want.below);
        CHECK(ranged->above == want.above);
    }
}

}  // namespace

TEST_CASE("histogram bins are numpy's: values on every edge, exact zeros of a symmetric range, bins no float candidate finds", "[stats]") {
    // The repro: 0 between the extremes of Q8_0 output.weight, whose float scale rounds down.
    const float end = 0.19996357f;
    auto three = compute_histogram(VectorSource(std::vector<float>{-end, 0.0f, end}), 64);
    REQUIRE(three.ok());
    CHECK(three->counts[31] == 0);
    CHECK(three->counts[32] == 1);

    // Multiples of a step from -127 to 127 (a symmetric range, many exact zeros), every edge of
    // the bin counts tested and the floats on either side of it, and values that are not finite.
    const float step = 0.0123f, lo = -127.0f * step, hi = 127.0f * step;
    std::vector<float> values;
    for (int k = -127; k <= 127; ++k) values.insert(values.end(), k == 0 ? 40 : 3, static_cast<float>(k) * step);
    const uint32_t counts[] = {1, 7, 64, 256, 1000, 4096};
    for (uint32_t bins : counts)
        for (uint32_t j = 1; j < bins; ++j) {
            const auto edge = static_cast<float>(static_cast<double>(j) * ((static_cast<double>(hi) - lo) / bins) + lo);
            values.insert(values.end(), {edge, std::nextafter(edge, INFINITY), std::nextafter(edge, -INFINITY)});
        }
    values.insert(values.end(), {NAN, INFINITY, -INFINITY});
    for (uint32_t bins : counts) {
        INFO(bins << " bins");
        require_numpy_bins(values, bins, {-0.3, 0.7});
    }

    // Ranges where a float candidate may be many bins off: narrow against their distance from 0,
    // and subnormal (a float scale that overflows). Their bins are searched.
    CHECK_FALSE(Binning::over(1000.0001, 1000.0002, 4096).settles_in_one);
    CHECK_FALSE(Binning::over(0x1p-149, 0x1p-146, 256).settles_in_one);
    CHECK(Binning::over(-1.0, 1.0, 4096).settles_in_one);
    std::vector<float> near_thousand, subnormal;
    for (float x = 999.99f; x < 1000.01f; x = std::nextafter(x, INFINITY)) near_thousand.push_back(x);
    for (int k = 1; k <= 9; ++k) subnormal.push_back(static_cast<float>(k) * 0x1p-149f);
    for (uint32_t bins : {3u, 256u, 4096u}) {
        INFO(bins << " bins");
        require_numpy_bins(near_thousand, bins, {1000.0001, 1000.0002});
        require_numpy_bins(subnormal, bins, {0x1p-148, 0x1p-146});
    }
}

TEST_CASE("a quick range that disagrees with the decoded values is counted again", "[stats]") {
    const auto values = test::test_signal(300000, 8);  // spans about [-1, 1]
    const WrongRangeSource wrong(values);
    for (unsigned threads : {1u, 2u}) require_same_figures(wrong, values, 256, threads);
}

namespace {

// Every value equals, bit for bit, its group's value of its code (codes come in value order); a
// NaN is any NaN.
void require_code_values_decode(const TensorView& view) {
    const CodeGroups shape = view.code_groups();
    REQUIRE(shape.codes != 0);
    REQUIRE(shape.codes <= shape.length);
    const std::vector<float> values = decoded(view);
    std::vector<uint8_t> codes(values.size());
    std::vector<float> table(values.size() / shape.length * shape.codes);
    REQUIRE(view.read_code_groups(0, values.size(), codes.data(), table.data()).ok());
    uint64_t differ = 0;
    for (uint64_t i = 0; i < values.size(); ++i) {
        REQUIRE(codes[i] < shape.codes);
        const float want = table[i / shape.length * shape.codes + codes[i]];
        differ += std::isnan(want) ? !std::isnan(values[i]) : std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(values[i]);
    }
    CHECK(differ == 0);
}

// Every value equals, bit for bit, its group's step times its code; a NaN is any NaN.
void require_steps_decode(const TensorView& view) {
    const uint32_t length = view.scaled_groups();
    REQUIRE(length != 0);
    const std::vector<float> values = decoded(view);
    std::vector<int8_t> codes(values.size());
    std::vector<float> steps(values.size() / length);
    REQUIRE(view.read_scaled_groups(0, values.size(), codes.data(), steps.data()).ok());
    uint64_t differ = 0;
    for (uint64_t i = 0; i < values.size(); ++i) {
        const float want = steps[i / length] * static_cast<float>(codes[i]);
        differ += std::isnan(want) ? !std::isnan(values[i]) : std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(values[i]);
    }
    CHECK(differ == 0);
}

// Sets the float16 at `offset` of every `block_bytes`-byte block of `bytes` (blocks `from` to
// `to`, one in `every`) to `half`.
void set_halves(std::vector<uint8_t>& bytes, uint64_t data, uint64_t blocks, uint32_t block_bytes, uint32_t offset, uint16_t half,
                uint64_t from, uint64_t every) {
    for (uint64_t b = from; b < blocks; b += every) {
        bytes[data + b * block_bytes + offset] = static_cast<uint8_t>(half & 0xFF);
        bytes[data + b * block_bytes + offset + 1] = static_cast<uint8_t>(half >> 8);
    }
}

}  // namespace

TEST_CASE("statistics equal those of the decoded values on every block type of scale times code", "[stats][code_groups]") {
    test::TempDir dir;
    const uint64_t ne0 = 1024, rows = 70;  // 71,680 values: two chunks of groups
    // The types whose statistics count codes, then those that bin each code times its step.
    const ggml_type types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_IQ4_NL, GGML_TYPE_Q4_K, GGML_TYPE_IQ4_XS,
                               GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_0};
    // Per type: random values; random with adversarial blocks (zero, negative zero, negative
    // scales and offsets); every scale and offset 1, so that every value is an integer on a bin
    // edge; subnormal scales; and blocks whose scale is infinite or NaN.
    const char* variants[] = {"random", "adversarial", "edges", "subnormal", "nonfinite"};
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : types)
        for (const char* v : variants)
            tensors.push_back({std::string(ggml_type_name(t)) + "." + v,
                               static_cast<uint32_t>(t),
                               {ne0, rows},
                               test::test_signal(ne0 * rows, t * 7 + static_cast<uint64_t>(tensors.size()))});
    test::write_fixture_model(dir.file("g.gguf"), tensors);
    std::vector<uint8_t> bytes = test::read_whole_file(dir.file("g.gguf"));
    {
        auto model = open_gguf(dir.file("g.gguf"));
        REQUIRE(model.ok());
        for (const TensorInfo& t : model->tensors) {
            const uint32_t bb = t.type.block_bytes;
            const uint64_t blocks = t.n_elements / t.type.block_size, at = t.data_offset;
            // The block's float16 scale d, and the second one where there is one: an offset (m)
            // or a scale of mins (dmin).
            const auto fields = ggml_type_row(t.type.id)->scales();
            const uint32_t d = fields[0].offset;
            const bool second = fields.size() == 2;
            const uint32_t m = second ? fields[1].offset : 0;
            if (t.name.ends_with(".adversarial")) {
                set_halves(bytes, at, blocks, bb, d, 0x0000, 0, 7);  // d = 0
                set_halves(bytes, at, blocks, bb, d, 0x8000, 1, 7);  // d = -0
                for (uint64_t b = 2; b < blocks; b += 7) bytes[at + b * bb + d + 1] ^= 0x80;  // d negated
                if (second) {
                    for (uint64_t b = 3; b < blocks; b += 7) bytes[at + b * bb + m + 1] ^= 0x80;  // m or dmin negated
                    set_halves(bytes, at, blocks, bb, m, 0x0000, 4, 7);
                }
            } else if (t.name.ends_with(".edges")) {
                set_halves(bytes, at, blocks, bb, d, 0x3C00, 0, 1);  // d = 1
                if (second) set_halves(bytes, at, blocks, bb, m, 0x3C00, 0, 1);
            } else if (t.name.ends_with(".subnormal")) {
                set_halves(bytes, at, blocks, bb, d, 0x0001, 0, 3);  // d = 2^-24, the least float16
                set_halves(bytes, at, blocks, bb, d, 0x83FF, 1, 3);  // the greatest negative subnormal
                if (second) set_halves(bytes, at, blocks, bb, m, 0x0200, 0, 2);
            } else if (t.name.ends_with(".nonfinite")) {
                set_halves(bytes, at, blocks, bb, d, 0x7C00, 5, 1000);  // +Inf
                set_halves(bytes, at, blocks, bb, d, 0x7E00, 9, 1000);  // NaN
            }
        }
    }
    test::write_whole_file(dir.file("g.gguf"), bytes);
    auto model = open_gguf(dir.file("g.gguf"));
    REQUIRE(model.ok());
    for (const TensorInfo& t : model->tensors) {
        INFO(t.name);
        auto view = TensorView::open(*model, t.name);
        REQUIRE(view.ok());
        const bool codes = view->code_groups().codes != 0, scaled = view->scaled_groups() != 0;
        CHECK(codes != scaled);  // each type is one or the other
        if (codes) require_code_values_decode(*view);
        if (scaled) require_steps_decode(*view);
        const std::vector<float> values = decoded(*view);
        const bool finite = std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); });
        CHECK(finite == !t.name.ends_with(".nonfinite"));
        // The quick range is exact where every value is finite.
        auto range = view->quick_range(0, values.size());
        REQUIRE(range.ok());
        REQUIRE(range->has_value() == finite);
        if (finite) {
            CHECK((*range)->min == *std::min_element(values.begin(), values.end()));
            CHECK((*range)->max == *std::max_element(values.begin(), values.end()));
        }
        // Bins whose edges fall on integers for the edge tensors, and a common count.
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        const auto span = finite ? static_cast<uint32_t>(std::min(*hi - *lo, 4096.0f)) : 16u;
        for (uint32_t bins : {1u, std::max(span, 1u), 256u})
            for (unsigned threads : {1u, 2u}) require_same_figures(*view, values, bins, threads);
        const test::ReadCountingSource counted(*view);
        auto s = compute_stats_and_histogram(counted, 256, nullptr, 2);
        REQUIRE(s.ok());
        CHECK((counted.reads() == 0) == finite);  // decoded only when a scale is not finite
        // Blocks with d = 0 or -0 are zeros where no offset is added.
        const bool offset = ggml_type_row(t.type.id)->scales().size() == 2;
        if (t.name.ends_with(".adversarial") && !offset)
            CHECK(s->stats.zeros >= 2 * (t.n_elements / t.type.block_size / 7) * t.type.block_size);
    }
}

namespace {

// Groups of 24 values from 12 codes, value c of group g being c * scale_g + offset_g (scales of
// either sign, a zero one, offsets that put values on bin edges): a code-group shape that no
// vector path takes, so statistics count and tally it with their plain loops.
class PlainCodeGroups final : public FloatSource {
public:
    static constexpr uint32_t kLength = 24, kCodes = 12;

    explicit PlainCodeGroups(uint64_t groups) : m_codes(groups * kLength), m_table(groups * kCodes) {
        for (uint64_t g = 0; g < groups; ++g) {
            const float scale = g % 5 == 0 ? 0.0f : (g % 3 == 0 ? -0.25f : 0.125f) * static_cast<float>(1 + g % 7);
            const float offset = static_cast<float>(g % 11) - 5.0f;
            for (uint32_t c = 0; c < kCodes; ++c) m_table[g * kCodes + c] = static_cast<float>(c) * scale + offset;
            for (uint32_t i = 0; i < kLength; ++i) m_codes[g * kLength + i] = static_cast<uint8_t>((g * 7 + i * i) % kCodes);
        }
    }
    uint64_t size() const override { return m_codes.size(); }
    uint64_t granularity() const override { return kLength; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        m_reads += 1;
        for (uint64_t i = 0; i < count; ++i) out[i] = m_table[(first + i) / kLength * kCodes + m_codes[first + i]];
        return ok_status();
    }
    uint64_t reads() const { return m_reads; }
    CodeGroups code_groups() const override { return {kCodes, kLength}; }
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override {
        std::memcpy(codes, m_codes.data() + first, count);
        std::memcpy(values, m_table.data() + first / kLength * kCodes, count / kLength * kCodes * sizeof(float));
        return ok_status();
    }

private:
    std::vector<uint8_t> m_codes;
    std::vector<float> m_table;
    mutable std::atomic<uint64_t> m_reads{0};
};

}  // namespace

TEST_CASE("code groups of a shape no vector path takes are counted and tallied plainly", "[stats][code_groups]") {
    const PlainCodeGroups source(5000);  // 120,000 values: several chunks
    std::vector<float> values(source.size());
    REQUIRE(source.read(0, values.size(), values.data()).ok());
    for (uint32_t bins : {1u, 7u, 256u})
        for (unsigned threads : {1u, 2u}) require_same_figures(source, values, bins, threads);
    const PlainCodeGroups counted(5000);
    auto s = compute_stats(counted, nullptr, 2);
    REQUIRE(s.ok());
    CHECK(counted.reads() == 0);  // the code-group route: nothing decoded
    CHECK(s->min == *std::min_element(values.begin(), values.end()));
    CHECK(s->max == *std::max_element(values.begin(), values.end()));
    CHECK(s->zeros == static_cast<uint64_t>(std::count(values.begin(), values.end(), 0.0f)));
    CHECK(s->zeros > 0);
}

namespace {

// The least and greatest of `count` values of a source from `first`, read (one read()).
ValueBounds read_range(const FloatSource& source, uint64_t first, uint64_t count) {
    std::vector<float> v(count);
    (void)source.read(first, count, v.data());
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return {*lo, *hi};
}

// Groups of 24 values, value i of group g being step_g * code (steps of either sign, zero and
// subnormal; codes over the whole int8 range, many on bin edges): a scaled-group length that the
// AVX-512 pass does not take, so statistics bin and sum it with their plain loops. Its quick
// range is exact.
class PlainScaledGroups final : public FloatSource {
public:
    static constexpr uint32_t kLength = 24;

    explicit PlainScaledGroups(uint64_t groups) : m_codes(groups * kLength), m_steps(groups) {
        for (uint64_t g = 0; g < groups; ++g) {
            m_steps[g] = g % 5 == 0 ? 0.0f : (g % 3 == 0 ? -0.25f : 0.125f) * static_cast<float>(1 + g % 7);
            if (g % 13 == 0 && g % 5 != 0) m_steps[g] = std::numeric_limits<float>::denorm_min();
            for (uint32_t i = 0; i < kLength; ++i) m_codes[g * kLength + i] = static_cast<int8_t>((g * 37 + i * i * 11) % 256 - 128);
        }
    }
    uint64_t size() const override { return m_codes.size(); }
    uint64_t granularity() const override { return kLength; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        m_reads += 1;
        for (uint64_t i = 0; i < count; ++i) out[i] = m_steps[(first + i) / kLength] * static_cast<float>(m_codes[first + i]);
        return ok_status();
    }
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override {
        const ValueBounds range = read_range(*this, first, count);
        m_reads -= 1;  // a range, not a decoding pass
        return std::optional<ValueBounds>{range};
    }
    uint32_t scaled_groups() const override { return kLength; }
    Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const override {
        std::memcpy(codes, m_codes.data() + first, count);
        std::memcpy(steps, m_steps.data() + first / kLength, count / kLength * sizeof(float));
        return ok_status();
    }
    uint64_t reads() const { return m_reads; }

private:
    std::vector<int8_t> m_codes;
    std::vector<float> m_steps;
    mutable std::atomic<int64_t> m_reads{0};
};

}  // namespace

TEST_CASE("scaled groups of a length no vector path takes are binned and summed plainly", "[stats][scaled_groups]") {
    const PlainScaledGroups source(12000);  // 288,000 values: two chunks of 2^18 values
    std::vector<float> values(source.size());
    REQUIRE(source.read(0, values.size(), values.data()).ok());
    for (uint32_t bins : {1u, 7u, 256u})
        for (unsigned threads : {1u, 2u}) require_same_figures(source, values, bins, threads);
    const PlainScaledGroups counted(12000);
    auto s = compute_stats(counted, nullptr, 2);
    REQUIRE(s.ok());
    CHECK(counted.reads() == 0);  // the scaled-group route: nothing decoded
    CHECK(s->min == *std::min_element(values.begin(), values.end()));
    CHECK(s->max == *std::max_element(values.begin(), values.end()));
    CHECK(s->zeros == static_cast<uint64_t>(std::count(values.begin(), values.end(), 0.0f)));
    CHECK(s->zeros >= 2400 * PlainScaledGroups::kLength);  // every fifth group has a zero step
}

TEST_CASE("Q8_0 and Q6_K are scaled groups of 32 and 16 values - other types are not", "[stats][scaled_groups]") {
    test::TempDir dir;
    const auto values = test::test_signal(512, 12);
    test::write_fixture_model(dir.file("q.gguf"), {{"q8_0", GGML_TYPE_Q8_0, {512}, values},
                                                   {"q6_K", GGML_TYPE_Q6_K, {512}, values},
                                                   {"q5_K", GGML_TYPE_Q5_K, {512}, values}});
    auto model = open_gguf(dir.file("q.gguf"));
    REQUIRE(model.ok());
    CHECK(TensorView::open(*model, "q8_0")->scaled_groups() == 32);
    CHECK(TensorView::open(*model, "q6_K")->scaled_groups() == 16);
    auto q5k = TensorView::open(*model, "q5_K");
    CHECK(q5k->scaled_groups() == 0);
    std::vector<int8_t> codes(256);
    std::vector<float> steps(16);
    CHECK(q5k->read_scaled_groups(0, 256, codes.data(), steps.data()).error().code == ErrorCode::E_UNSUPPORTED_TYPE);
    auto q6k = TensorView::open(*model, "q6_K");
    // Not on a block boundary.
    CHECK(q6k->read_scaled_groups(1, 255, codes.data(), steps.data()).error().code == ErrorCode::E_RANGE);
    // The first Q6_K group: values 0..15 of the block, codes in [-32, 31].
    REQUIRE(q6k->read_scaled_groups(0, 256, codes.data(), steps.data()).ok());
    CHECK(std::all_of(codes.begin(), codes.end(), [](int8_t c) { return c >= -32 && c < 32; }));
    const std::vector<float> decoded_values = decoded(*q6k);
    for (int i = 0; i < 16; ++i) CHECK(decoded_values[i] == steps[0] * static_cast<float>(codes[i]));
}

namespace {

// Statistics of a view with code, scaled or offset groups equal those of its decoded values, and
// decode nothing.
void require_grouped_statistics(const TensorView& view) {
    for (uint32_t bins : {1u, 256u}) require_same_figures(view, bins, 2);
    const test::ReadCountingSource counted(view);
    REQUIRE(compute_stats(counted).ok());
    CHECK(counted.reads() == 0);
}

}  // namespace

TEST_CASE("MLX affine int4 groups are code groups - int8 and global-scaled ones are not", "[stats][code_groups]") {
    const auto values = test::test_signal(128 * 96, 6);
    for (uint64_t group : {32u, 64u, 128u}) {
        INFO(group);
        const Model m = mlx_affine_blob(4, group, 96, 128, values, [](MlxQuantized& q) {
            q.scales[3] = -q.scales[3];  // a negative scale
            q.scales[5] = 0.0f;  // a group of one value
        });
        auto view = TensorView::open(m, "w");
        REQUIRE(view.ok());
        CHECK(view->code_groups().length == group);
        CHECK(view->offset_groups().length == 0);
        require_code_values_decode(*view);
        require_grouped_statistics(*view);
    }
    // Groups of 256 values and more: a code may fill a group, more than a group's counts (bytes)
    // hold, so they are decoded. The first group here is one value throughout.
    std::vector<float> flat = values;
    std::fill(flat.begin(), flat.begin() + 512, 0.5f);
    for (uint64_t group : {256u, 512u}) {
        INFO(group);
        const Model wide = mlx_affine_blob(4, group, 24, 512, flat);
        auto view = TensorView::open(wide, "w");
        REQUIRE(view.ok());
        CHECK(view->code_groups().codes == 0);
        std::vector<float> decoded(view->size());
        REQUIRE(view->read(0, decoded.size(), decoded.data()).ok());
        for (unsigned threads : {1u, 2u}) require_same_figures(*view, decoded, 256, threads);
    }
    const Model m = mlx_affine_blob(8, 64, 96, 128, values);
    auto view = TensorView::open(m, "w");
    REQUIRE(view.ok());
    CHECK(view->code_groups().codes == 0);
    std::vector<uint8_t> codes(64);
    std::vector<float> table(256);
    CHECK(view->read_code_groups(0, 64, codes.data(), table.data()).error().code == ErrorCode::E_UNSUPPORTED_TYPE);
}

TEST_CASE("the range of the block types read in vectors equals the decoded extremes for any run of blocks", "[stats][code_groups]") {
    // Q4_0, Q4_1, IQ4_NL, Q5_0, Q5_1 and Q8_0 find their range sixteen blocks at a time, Q4_K, Q5_K
    // and IQ4_XS two at a time, Q6_K one at a time, where the CPU has AVX-512: runs of every length
    // around that, over quantized and random code bytes, fifth bits, K-quant scales and mins, IQ4_XS's
    // 6-bit scales and Q6_K's signed sub-block scales, with negated scales and offsets, blocks of one
    // code (the least and the greatest), and a NaN d.
    test::TempDir dir;
    const uint64_t ne0 = 1024;  // 64 blocks of each type
    const ggml_type types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_IQ4_NL, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                               GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_IQ4_XS, GGML_TYPE_Q6_K, GGML_TYPE_Q8_0};
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : types) {
        const uint64_t rows = 64 * ggml_blck_size(t) / ne0;
        tensors.push_back({ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t + 40)});
    }
    test::write_fixture_model(dir.file("b.gguf"), tensors);
    std::vector<uint8_t> bytes = test::read_whole_file(dir.file("b.gguf"));
    {
        auto model = open_gguf(dir.file("b.gguf"));
        REQUIRE(model.ok());
        uint64_t state = 0x9E3779B97F4A7C15ull;
        for (const TensorInfo& t : model->tensors) {
            const uint32_t bb = t.type.block_bytes;
            const uint64_t blocks = t.n_elements / t.type.block_size, at = t.data_offset;
            const auto fields = ggml_type_row(t.type.id)->scales();
            // Fifth bits (Q5), K or IQ4_XS scales, then nibbles, after the scale fields; Q6_K's
            // nibbles, pairs and sub-block scales before its d.
            const bool q6_k = t.type.id == GGML_TYPE_Q6_K;
            const uint32_t codes_from = q6_k ? 0 : fields.back().offset + 2, random_to = q6_k ? 208 : bb, codes_to = q6_k ? 192 : bb;
            for (uint64_t b = 0; b < blocks; ++b) {
                uint8_t* block = bytes.data() + at + b * bb;
                // A third of the blocks random; the others keep their quantized codes, whose least
                // and greatest differ from one 32-value group to the next.
                for (uint32_t i = codes_from; i < random_to && b % 3 == 0; ++i) {
                    state = state * 6364136223846793005ull + 1442695040888963407ull;
                    block[i] = static_cast<uint8_t>(state >> 56);
                }
                if (b % 9 == 4) std::memset(block + codes_from, 0x00, codes_to - codes_from);  // every code 0
                if (b % 9 == 5) std::memset(block + codes_from, 0xFF, codes_to - codes_from);  // every code the greatest
            }
            set_halves(bytes, at, blocks, bb, fields[0].offset, 0x3C00, 11, 1000);  // d = 1
            for (uint64_t b = 2; b < blocks; b += 3) bytes[at + b * bb + fields[0].offset + 1] ^= 0x80;  // d negated
            if (fields.size() == 2)
                for (uint64_t b = 1; b < blocks; b += 5) bytes[at + b * bb + fields[1].offset + 1] ^= 0x80;  // m negated
        }
    }
    test::write_whole_file(dir.file("b.gguf"), bytes);
    for (bool with_nan : {false, true}) {
        if (with_nan) {
            auto model = open_gguf(dir.file("b.gguf"));
            for (const TensorInfo& t : model->tensors)
                set_halves(bytes, t.data_offset, 41, t.type.block_bytes, ggml_type_row(t.type.id)->scales()[0].offset, 0x7E00, 40, 1000);
            test::write_whole_file(dir.file("b.gguf"), bytes);
        }
        auto model = open_gguf(dir.file("b.gguf"));
        REQUIRE(model.ok());
        for (ggml_type t : types) {
            INFO(ggml_type_name(t) << (with_nan ? " with a NaN d in block 40" : ""));
            auto view = TensorView::open(*model, ggml_type_name(t));
            REQUIRE(view.ok());
            const std::vector<float> values = decoded(*view);
            const uint64_t block = ggml_blck_size(t);
            for (uint64_t first : {0u, 5u, 23u})
                for (uint64_t count : {1u, 2u, 3u, 15u, 16u, 17u, 31u, 32u, 33u, 41u}) {
                    INFO("blocks " << first << " to " << first + count);
                    auto r = view->quick_range(block * first, block * count);
                    REQUIRE(r.ok());
                    const auto from = values.begin() + static_cast<int64_t>(block * first);
                    const auto to = from + static_cast<int64_t>(block * count);
                    const bool finite = std::all_of(from, to, [](float x) { return std::isfinite(x); });
                    CHECK(finite == (!with_nan || first + count <= 40 || first > 40));
                    REQUIRE(r->has_value() == finite);
                    if (!finite) continue;
                    const auto [lo, hi] = std::minmax_element(from, to);
                    CHECK((*r)->min == *lo);
                    CHECK((*r)->max == *hi);
                }
            // Every block alone, every aligned pair and every aligned sixteen (the steps the
            // readers take), so that each block's extremes count in every place a reader puts it,
            // not only in runs whose extremes one large block (block 11, d = 1) holds.
            for (uint64_t span : {1u, 2u, 16u})
                for (uint64_t b = 0; b + span <= values.size() / block; b += span) {
                    INFO("blocks " << b << " to " << b + span);
                    auto r = view->quick_range(block * b, block * span);
                    REQUIRE(r.ok());
                    const auto from = values.begin() + static_cast<int64_t>(block * b);
                    const auto to = from + static_cast<int64_t>(block * span);
                    REQUIRE(r->has_value() == std::all_of(from, to, [](float x) { return std::isfinite(x); }));
                    if (!r->has_value()) continue;
                    const auto [lo, hi] = std::minmax_element(from, to);
                    CHECK((*r)->min == *lo);
                    CHECK((*r)->max == *hi);
                }
            if (!with_nan)
                for (unsigned threads : {1u, 2u}) require_same_figures(*view, values, 256, threads);
        }
    }
}

namespace {

// step * code rounded to float, then + offset rounded to float: the product stored in a volatile
// keeps the compiler from fusing them, as read() never does.
float offset_value(float step, uint8_t code, float offset) {
    const volatile float product = step * static_cast<float>(code);
    return product + offset;
}

// Every value equals, bit for bit, its group's step times its code plus its offset; a NaN is any NaN.
void require_offsets_decode(const FloatSource& view) {
    const uint32_t length = view.offset_groups().length;
    REQUIRE(length != 0);
    std::vector<float> values(view.size());
    REQUIRE(view.read(0, values.size(), values.data()).ok());
    std::vector<uint8_t> codes(values.size());
    std::vector<float> steps(values.size() / length), offsets(steps.size());
    REQUIRE(view.read_offset_groups(0, values.size(), codes.data(), steps.data(), offsets.data()).ok());
    uint64_t differ = 0;
    for (uint64_t i = 0; i < values.size(); ++i) {
        REQUIRE(codes[i] < view.offset_groups().codes);
        const float want = offset_value(steps[i / length], codes[i], offsets[i / length]);
        differ += std::isnan(want) ? !std::isnan(values[i]) : std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(values[i]);
    }
    CHECK(differ == 0);
}

// Groups of `length` values, value i of group g being step_g * code + offset_g over every 8-bit
// code: steps of either sign, zero, subnormal, tiny and huge; offsets zero, far from zero against
// their step (their sums round), and on bin edges; some groups of one code. Its quick range is
// exact.
class OffsetGroupsSource final : public FloatSource {
public:
    OffsetGroupsSource(uint32_t length, uint64_t groups) : m_length(length), m_codes(groups * length), m_steps(groups), m_offsets(groups) {
        uint64_t state = 0x2545F4914F6CDD1Dull;
        for (uint64_t g = 0; g < groups; ++g) {
            const float steps[] = {0.125f, -0.375f, 0.0f, std::numeric_limits<float>::denorm_min(), 1e-30f, 3e25f, 0.0078125f, -1.0f};
            const float offsets[] = {0.0f, -5.0f, 1e4f, -3e5f, 0.5f, 1.0f / 3.0f, -1e-30f, 7.0f};
            m_steps[g] = steps[g % 8];
            m_offsets[g] = offsets[(g / 8 + g) % 8];
            if (m_steps[g] == 3e25f) m_offsets[g] = 0.0f;  // values up to 7.7e27: the huge end of the range
            for (uint32_t i = 0; i < length; ++i) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                m_codes[g * length + i] = g % 13 == 0 ? static_cast<uint8_t>(g) : static_cast<uint8_t>(state >> 56);
            }
        }
    }
    uint64_t size() const override { return m_codes.size(); }
    uint64_t granularity() const override { return m_length; }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        m_reads += 1;
        for (uint64_t i = 0; i < count; ++i)
            out[i] = offset_value(m_steps[(first + i) / m_length], m_codes[first + i], m_offsets[(first + i) / m_length]);
        return ok_status();
    }
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override {
        const ValueBounds range = read_range(*this, first, count);
        m_reads -= 1;  // a range, not a decoding pass
        return std::optional<ValueBounds>{range};
    }
    OffsetGroups offset_groups() const override { return {m_length, 256}; }
    Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const override {
        std::memcpy(codes, m_codes.data() + first, count);
        std::memcpy(steps, m_steps.data() + first / m_length, count / m_length * sizeof(float));
        std::memcpy(offsets, m_offsets.data() + first / m_length, count / m_length * sizeof(float));
        return ok_status();
    }
    uint64_t reads() const { return static_cast<uint64_t>(m_reads.load()); }

private:
    uint32_t m_length;
    std::vector<uint8_t> m_codes;
    std::vector<float> m_steps, m_offsets;
    mutable std::atomic<int64_t> m_reads{0};
};

// The scaled- or offset-group pass with AVX-512 (where the CPU has it) and with its plain loops
// over `src`, binned over its quick range: the same counts, zeros and extremes, sums and moments
// equal up to rounding.
void require_same_routes(const FloatSource& src, uint32_t bins, unsigned threads) {
    auto range = src.quick_range(0, src.size());
    REQUIRE(range.ok());
    REQUIRE(range->has_value());
    const Binning binning = Binning::over((*range)->min, (*range)->max > (*range)->min ? (*range)->max : (*range)->min + 1.0, bins);
    ValueSummary<double> vector_figures, plain_figures;
    std::vector<uint64_t> vector_counts, plain_counts;
    REQUIRE(summarize_scaled_groups(src, binning, nullptr, threads, 0, 1, vector_figures, vector_counts, true).ok());
    REQUIRE(summarize_scaled_groups(src, binning, nullptr, threads, 0, 1, plain_figures, plain_counts, false).ok());
    CHECK(vector_counts == plain_counts);
    uint64_t total = 0;
    for (uint64_t c : plain_counts) total += c;
    CHECK(total == src.size());
    CHECK(vector_figures.zeros == plain_figures.zeros);
    CHECK(vector_figures.min == plain_figures.min);
    CHECK(vector_figures.max == plain_figures.max);
    CHECK(vector_figures.min == (*range)->min);
    CHECK(vector_figures.max == (*range)->max);
    CHECK(vector_figures.sum_abs == Approx(plain_figures.sum_abs));
    const auto& a = vector_figures.moments;
    const auto& b = plain_figures.moments;
    CHECK(a.n == b.n);
    CHECK(a.mean == Approx(b.mean).margin(1e-12));
    CHECK(a.m2 == Approx(b.m2));
    CHECK(a.m3 == Approx(b.m3).margin(1e-9 * std::pow(std::max(b.m2, 1e-300), 1.5)));
    CHECK(a.m4 == Approx(b.m4));
}

}  // namespace

TEST_CASE("offset groups bin and sum each value as read() gives it, in vectors and in the plain loops", "[stats][offset_groups]") {
    // 16 and multiples of 32 take the AVX-512 pass where the CPU has it, 24 the plain loops.
    for (uint32_t length : {16u, 24u, 32u, 64u, 128u}) {
        INFO("groups of " << length);
        const OffsetGroupsSource source(length, 300000 / length);  // two chunks of 2^18 values
        require_offsets_decode(source);
        std::vector<float> values(source.size());
        REQUIRE(source.read(0, values.size(), values.data()).ok());
        for (uint32_t bins : {1u, 7u, 256u})
            for (unsigned threads : {1u, 2u}) require_same_figures(source, values, bins, threads);
        for (uint32_t bins : {3u, 4096u}) require_same_routes(source, bins, 2);
        const OffsetGroupsSource counted(length, 300000 / length);
        auto s = compute_stats(counted, nullptr, 2);
        REQUIRE(s.ok());
        CHECK(counted.reads() == 0);  // the offset-group route: nothing decoded
        CHECK(s->zeros == static_cast<uint64_t>(std::count(values.begin(), values.end(), 0.0f)));
        CHECK(s->min == *std::min_element(values.begin(), values.end()));
        CHECK(s->max == *std::max_element(values.begin(), values.end()));
    }
}

TEST_CASE("Q8_0, Q6_K and Q5_K statistics take the same figures in vectors and in the plain loops", "[stats][scaled_groups][offset_groups]") {
    test::TempDir dir;
    const uint64_t ne0 = 1024, rows = 70;
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : {GGML_TYPE_Q8_0, GGML_TYPE_Q6_K, GGML_TYPE_Q5_K, GGML_TYPE_Q4_K})
        tensors.push_back({ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t + 90)});
    test::write_fixture_model(dir.file("v.gguf"), tensors);
    auto model = open_gguf(dir.file("v.gguf"));
    REQUIRE(model.ok());
    for (ggml_type t : {GGML_TYPE_Q8_0, GGML_TYPE_Q6_K, GGML_TYPE_Q5_K}) {
        INFO(ggml_type_name(t));
        auto view = TensorView::open(*model, ggml_type_name(t));
        REQUIRE(view.ok());
        for (uint32_t bins : {1u, 256u, 4096u})
            for (unsigned threads : {1u, 2u}) require_same_routes(*view, bins, threads);
    }
    auto q5k = TensorView::open(*model, "q5_K");
    CHECK(q5k->offset_groups().length == 32);
    CHECK(q5k->offset_groups().codes == 32);
    CHECK(q5k->code_groups().codes == 32);  // also code groups; statistics take the offset groups
    require_offsets_decode(*q5k);
    require_grouped_statistics(*q5k);
    // Q4_K stays code groups; Q8_0 is scaled groups only.
    auto q4k = TensorView::open(*model, "q4_K");
    CHECK(q4k->offset_groups().length == 0);
    std::vector<uint8_t> codes(256);
    std::vector<float> steps(8), offsets(8);
    CHECK(q4k->read_offset_groups(0, 256, codes.data(), steps.data(), offsets.data()).error().code == ErrorCode::E_UNSUPPORTED_TYPE);
    CHECK(TensorView::open(*model, "q8_0")->offset_groups().length == 0);
    CHECK(q5k->read_offset_groups(1, 255, codes.data(), steps.data(), offsets.data()).error().code == ErrorCode::E_RANGE);
}

TEST_CASE("MLX affine int8 groups are offset groups - int4 ones are not (above)", "[stats][offset_groups]") {
    const auto values = test::test_signal(128 * 96, 16);
    for (uint64_t group : {32u, 64u, 128u}) {
        INFO(group);
        const Model m = mlx_affine_blob(8, group, 96, 128, values, [](MlxQuantized& q) {
            q.scales[3] = -q.scales[3];  // a negative scale
            q.scales[5] = 0.0f;  // a group of one value
            q.biases[7] = 12345.0f;  // far from zero: its sums round
            q.scales[9] = std::numeric_limits<float>::denorm_min();
        });
        auto view = TensorView::open(m, "w");
        REQUIRE(view.ok());
        CHECK(view->offset_groups().length == group);
        CHECK(view->offset_groups().codes == 256);
        require_offsets_decode(*view);
        require_grouped_statistics(*view);
        for (unsigned threads : {1u, 2u}) require_same_routes(*view, 4096, threads);
    }
}

TEST_CASE("statistics are the same to the last bit on every run, whichever thread finishes a chunk first", "[stats]") {
    test::TempDir dir;
    const uint64_t ne0 = 4096, rows = 512;  // 2M values: many chunks on every route
    const ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q8_0, GGML_TYPE_Q6_K};
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : types)
        tensors.push_back({ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, 11 + t)});
    test::write_fixture_model(dir.file("d.gguf"), tensors);
    auto model = open_gguf(dir.file("d.gguf"));
    REQUIRE(model.ok());
    for (ggml_type t : types) {
        DYNAMIC_SECTION(ggml_type_name(t)) {
            auto view = TensorView::open(*model, ggml_type_name(t));
            REQUIRE(view.ok());
            auto first = compute_stats_and_histogram(*view, 256, nullptr, 4);
            REQUIRE(first.ok());
            auto same_bits = [](double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); };
            for (int run = 0; run < 12; ++run) {
                auto again = compute_stats_and_histogram(*view, 256, nullptr, run % 2 ? 4 : 3);
                REQUIRE(again.ok());
                CHECK(same_bits(again->stats.mean, first->stats.mean));
                CHECK(same_bits(again->stats.std, first->stats.std));
                CHECK(same_bits(again->stats.kurtosis, first->stats.kurtosis));
                CHECK(same_bits(again->stats.mean_abs, first->stats.mean_abs));
                CHECK(again->histogram.counts == first->histogram.counts);
            }
        }
    }
}
