// Decoding through TensorView is bit-exact with ggml's own to_float for every type ggml can
// quantize, reads the right bytes (values close to the source signal), and slices experts.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <cmath>
#include <cstring>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const ggml_type kQuantizable[] = {
    GGML_TYPE_F32,    GGML_TYPE_F16,   GGML_TYPE_BF16,    GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1,  GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0,   GGML_TYPE_Q2_K,  GGML_TYPE_Q3_K,    GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,  GGML_TYPE_IQ2_XXS,
    GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ4_NL,
    GGML_TYPE_IQ4_XS, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,   GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0,  GGML_TYPE_Q2_0};

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
    return std::sqrt(s / a.size());
}

}  // namespace

TEST_CASE("every quantizable ggml type decodes bit-exactly as ggml does", "[quant]") {
    test::TempDir dir;
    const uint64_t ne0 = 512, rows = 6;
    std::vector<test::FixtureTensor> tensors;
    for (ggml_type t : kQuantizable)
        tensors.push_back({std::string("t.") + ggml_type_name(t), static_cast<uint32_t>(t), {ne0, rows}, test::test_signal(ne0 * rows, t)});
    auto stored = test::write_fixture_model(dir.file("all.gguf"), tensors);
    auto model = open_gguf(dir.file("all.gguf"));
    REQUIRE(model.ok());
    REQUIRE(model->error_count() == 0);
    for (size_t i = 0; i < tensors.size(); ++i) {
        INFO(tensors[i].name);
        auto view = TensorView::open(*model, tensors[i].name);
        REQUIRE(view.ok());
        std::vector<float> ours(ne0 * rows), reference(ne0 * rows);
        REQUIRE(view->read(0, ne0 * rows, ours.data()).ok());
        if (auto to_float = ggml_get_type_traits(static_cast<ggml_type>(tensors[i].ggml_type))->to_float)
            to_float(stored[i].data(), reference.data(), ne0 * rows);
        else
            std::memcpy(reference.data(), stored[i].data(), stored[i].size());  // F32 has no to_float
        REQUIRE(std::memcmp(ours.data(), reference.data(), ours.size() * sizeof(float)) == 0);
        // The right bytes were read: the decoded signal is close to the one quantized (the
        // ternary and 1-bit types only keep the sign pattern, so their bound is loose).
        CHECK(rmse(ours, tensors[i].values) < 0.75);
        // One slice of the slowest dimension decodes the same values as the full read.
        auto row = view->slice(4);
        REQUIRE(row.ok());
        std::vector<float> slice(ne0);
        REQUIRE(row->read(0, ne0, slice.data()).ok());
        REQUIRE(std::memcmp(slice.data(), ours.data() + 4 * ne0, ne0 * sizeof(float)) == 0);
    }
}

TEST_CASE("F16 decodes every one of its 65536 codes bit for bit as ggml does", "[quant]") {
    // Codes in order, then a read of 13 values from an odd element, so the vector loop's tail runs.
    std::vector<uint8_t> bytes(2 * 65536);
    for (uint32_t c = 0; c < 65536; ++c) {
        bytes[2 * c] = static_cast<uint8_t>(c);
        bytes[2 * c + 1] = static_cast<uint8_t>(c >> 8);
    }
    test::SafetensorsBuilder sb;
    sb.tensor("h", "F16", "[65536]", bytes);
    Model m = read_safetensors(memory_source(sb.bytes()));
    auto view = TensorView::open(m, "h");
    REQUIRE(view.ok());
    std::vector<float> ours(65536), reference(65536);
    REQUIRE(view->read(0, 65536, ours.data()).ok());
    ggml_fp16_to_fp32_row(reinterpret_cast<const ggml_fp16_t*>(bytes.data()), reference.data(), 65536);
    CHECK(std::memcmp(ours.data(), reference.data(), ours.size() * sizeof(float)) == 0);
    CHECK(ours[0x3C00] == 1.0f);
    CHECK(std::isinf(ours[0x7C00]));
    CHECK(std::isnan(ours[0x7E01]));
    std::vector<float> part(13);
    REQUIRE(view->read(40001, 13, part.data()).ok());
    CHECK(std::memcmp(part.data(), reference.data() + 40001, part.size() * sizeof(float)) == 0);
}

TEST_CASE("Q8_0 decodes a hand-made block exactly", "[quant]") {
    // One Q8_0 block: f16 scale 0.5 (0x3800), then 32 int8 quants -16..15.
    test::TempDir dir;
    std::vector<float> values(32);
    for (int i = 0; i < 32; ++i) values[i] = (i - 16) * 0.5f;
    test::write_fixture_model(dir.file("q8.gguf"), {{"w", GGML_TYPE_Q8_0, {32}, values}});
    auto model = open_gguf(dir.file("q8.gguf"));
    REQUIRE(model.ok());
    uint8_t block[34];
    REQUIRE(model->read_tensor_bytes(0, 0, 34, block).ok());
    // The quantizer picks d = max|x| / 127 = 8/127; decoding gives q * d with q = round(x / d).
    uint16_t d16;
    std::memcpy(&d16, block, 2);
    float d = ggml_fp16_to_fp32(d16);
    CHECK(d == Approx(8.0f / 127.0f).epsilon(1e-3));
    auto view = TensorView::open(*model, 0);
    std::vector<float> out(32);
    REQUIRE(view->read(0, 32, out.data()).ok());
    for (int i = 0; i < 32; ++i) CHECK(out[i] == static_cast<int8_t>(block[2 + i]) * d);
    CHECK(out[0] == Approx(-8.0f).margin(d / 2));
}

TEST_CASE("unknown types and misaligned reads are refused, never decoded", "[quant]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("q4.gguf"), {{"w", GGML_TYPE_Q4_0, {64}, test::test_signal(64)}});
    auto model = open_gguf(dir.file("q4.gguf"));
    auto view = TensorView::open(*model, 0);
    REQUIRE(view.ok());
    std::vector<float> out(64);
    CHECK(view->read(5, 16, out.data()).error().code == ErrorCode::E_RANGE);
    CHECK(view->read(0, 100, out.data()).error().code == ErrorCode::E_RANGE);
    Model copy = *model;
    copy.tensors[0].type = describe_ggml_type(4);  // removed Q4_2
    CHECK(TensorView::open(copy, 0).error().code == ErrorCode::E_UNSUPPORTED_TYPE);
    CHECK(TensorView::open(*model, "missing").error().code == ErrorCode::E_NOT_FOUND);
}
