// Per-block scale distributions: hand-built blocks of each supported ggml type and an MLX blob,
// decoded to the values worked out by hand from the block layouts.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <cstring>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/stats.h"
#include "raw_gguf.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using test::RawTensor;

namespace {

std::vector<uint8_t> block(ggml_type type) { return std::vector<uint8_t>(ggml_type_size(type), 0); }

void put_half(std::vector<uint8_t>& b, size_t offset, uint16_t h) { std::memcpy(b.data() + offset, &h, 2); }

Model write_and_open(const test::TempDir& dir, const std::vector<RawTensor>& tensors) {
    const std::string path = dir.file("scales.gguf");
    REQUIRE(test::write_raw_gguf(path, tensors).ok());
    auto opened = open_gguf(path);
    REQUIRE(opened.ok());
    return std::move(*opened);
}

// The block scales of tensor "w" of a safetensors file built in memory, read as an Ollama blob.
BlockScales blob_block_scales(const test::SafetensorsBuilder& sb) {
    Model m = read_safetensors(memory_source(sb.bytes()));
    describe_tensor_blobs(m);
    auto view = TensorView::open(m, "w");
    REQUIRE(view.ok());
    auto r = block_scales(*view);
    REQUIRE(r.ok());
    return std::move(*r);
}

std::vector<float> series(const Model& m, const std::string& tensor, const std::string& name) {
    auto view = TensorView::open(m, tensor);
    REQUIRE(view.ok());
    auto scales = block_scales(*view);
    INFO(tensor << " " << name);
    REQUIRE(scales.ok());
    const ScaleSeries* s = scales->find(name);
    REQUIRE(s != nullptr);
    return s->values;
}

}  // namespace

TEST_CASE("block scales of ggml types match hand-decoded block layouts", "[block_scales]") {
    std::vector<RawTensor> ts;
    {  // Q8_0: two blocks, d = 0.5 and -2
        auto a = block(GGML_TYPE_Q8_0), b = block(GGML_TYPE_Q8_0);
        put_half(a, 0, 0x3800);
        put_half(b, 0, 0xC000);
        a.insert(a.end(), b.begin(), b.end());
        ts.push_back({"q8_0", GGML_TYPE_Q8_0, {64}, a});
    }
    {  // Q4_1: d = 1, m = -1
        auto a = block(GGML_TYPE_Q4_1);
        put_half(a, 0, 0x3C00);
        put_half(a, 2, 0xBC00);
        ts.push_back({"q4_1", GGML_TYPE_Q4_1, {32}, a});
    }
    {  // Q4_K: d = 0.5, dmin = 0.25; bytes 0..3 = 0x41, 4..7 = 0x82, 8..11 = 0x53
        auto a = block(GGML_TYPE_Q4_K);
        put_half(a, 0, 0x3800);
        put_half(a, 2, 0x3400);
        for (int i = 0; i < 4; ++i) {
            a[4 + i] = 0x41;
            a[8 + i] = 0x82;
            a[12 + i] = 0x53;
        }
        ts.push_back({"q4_k", GGML_TYPE_Q4_K, {256}, a});
    }
    {  // Q6_K: d = 0.5, int8 scales -8..7
        auto a = block(GGML_TYPE_Q6_K);
        for (int i = 0; i < 16; ++i) a[192 + i] = static_cast<uint8_t>(static_cast<int8_t>(i - 8));
        put_half(a, 208, 0x3800);
        ts.push_back({"q6_k", GGML_TYPE_Q6_K, {256}, a});
    }
    {  // Q3_K: d = 2; low nibbles 1 (bytes 0..7 low) and 2 (high); high bits 0,1,2,3 (0xE4)
        auto a = block(GGML_TYPE_Q3_K);
        for (int i = 0; i < 8; ++i) a[96 + i] = 0x21;
        for (int i = 8; i < 12; ++i) a[96 + i] = 0xE4;
        put_half(a, 108, 0x4000);
        ts.push_back({"q3_k", GGML_TYPE_Q3_K, {256}, a});
    }
    {  // Q2_K: d = 1, dmin = 0.5; scale byte i = (i << 4) | (15 - i)
        auto a = block(GGML_TYPE_Q2_K);
        for (int i = 0; i < 16; ++i) a[i] = static_cast<uint8_t>((i << 4) | (15 - i));
        put_half(a, 80, 0x3C00);
        put_half(a, 82, 0x3800);
        ts.push_back({"q2_k", GGML_TYPE_Q2_K, {256}, a});
    }
    {  // IQ4_XS: d = 1; scales_h = 0xE4E4, scales_l = 10 32 54 76
        auto a = block(GGML_TYPE_IQ4_XS);
        put_half(a, 0, 0x3C00);
        put_half(a, 2, 0xE4E4);
        a[4] = 0x10;
        a[5] = 0x32;
        a[6] = 0x54;
        a[7] = 0x76;
        ts.push_back({"iq4_xs", GGML_TYPE_IQ4_XS, {256}, a});
    }
    {  // F16 has no block scales
        ts.push_back({"f16", GGML_TYPE_F16, {2}, std::vector<uint8_t>(4, 0)});
    }
    test::TempDir dir;
    Model m = write_and_open(dir, ts);

    CHECK(series(m, "q8_0", "d") == std::vector<float>{0.5f, -2.0f});
    CHECK(series(m, "q4_1", "d") == std::vector<float>{1.0f});
    CHECK(series(m, "q4_1", "m") == std::vector<float>{-1.0f});

    CHECK(series(m, "q4_k", "d") == std::vector<float>{0.5f});
    CHECK(series(m, "q4_k", "dmin") == std::vector<float>{0.25f});
    // j < 4: sc = 0x41 & 63 = 1, m = 0x82 & 63 = 2; j >= 4: sc = 3 | 1 << 4 = 19, m = 5 | 2 << 4 = 37
    CHECK(series(m, "q4_k", "sub_scale") == std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 9.5f, 9.5f, 9.5f, 9.5f});
    CHECK(series(m, "q4_k", "sub_min") == std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 9.25f, 9.25f, 9.25f, 9.25f});

    std::vector<float> q6;
    for (int i = 0; i < 16; ++i) q6.push_back(0.5f * static_cast<float>(i - 8));
    CHECK(series(m, "q6_k", "sub_scale") == q6);

    // s = low | high << 4, minus 32: -31 x4, -15 x4, 2 x4, 18 x4; times d = 2
    CHECK(series(m, "q3_k", "sub_scale") == std::vector<float>{-62, -62, -62, -62, -30, -30, -30, -30, 4, 4, 4, 4, 36, 36, 36, 36});

    std::vector<float> q2_scale, q2_min;
    for (int i = 0; i < 16; ++i) {
        q2_scale.push_back(static_cast<float>(15 - i));
        q2_min.push_back(0.5f * static_cast<float>(i));
    }
    CHECK(series(m, "q2_k", "sub_scale") == q2_scale);
    CHECK(series(m, "q2_k", "sub_min") == q2_min);
    CHECK(series(m, "q2_k", "dmin") == std::vector<float>{0.5f});

    // ls = nibble ib | (2 bits of 0xE4E4 at 2*ib) << 4 = 0, 17, 34, 51, 4, 21, 38, 55; minus 32
    CHECK(series(m, "iq4_xs", "sub_scale") == std::vector<float>{-32, -15, 2, 19, -28, -11, 6, 23});

    auto f16 = TensorView::open(m, "f16");
    REQUIRE(f16.ok());
    auto none = block_scales(*f16);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().code == ErrorCode::E_UNSUPPORTED_TYPE);

    // A series feeds the ordinary statistics.
    auto view = TensorView::open(m, "q6_k");
    auto scales = block_scales(*view);
    REQUIRE(scales.ok());
    auto st = compute_stats(VectorSource(scales->find("sub_scale")->values));
    REQUIRE(st.ok());
    CHECK(st->min == -4.0);
    CHECK(st->max == 3.5);
    CHECK(st->mean == -0.25);
}

TEST_CASE("block scales of an MLX tensor are its group scales and biases", "[block_scales]") {
    test::SafetensorsBuilder sb;
    const float scale[2] = {0.5f, 2.0f}, bias[2] = {-1.0f, 1.0f};
    std::vector<uint8_t> s(8), b(8);
    std::memcpy(s.data(), scale, 8);
    std::memcpy(b.data(), bias, 8);
    sb.metadata("quant_type", "int4")
        .metadata("group_size", "8")
        .tensor("w", "U32", "[2,1]", std::vector<uint8_t>(8, 0))
        .tensor("w.scale", "F32", "[2,1]", s)
        .tensor("w.bias", "F32", "[2,1]", b);
    const BlockScales r = blob_block_scales(sb);
    CHECK(r.find("scale")->values == std::vector<float>{0.5f, 2.0f});
    CHECK(r.find("bias")->values == std::vector<float>{-1.0f, 1.0f});
    CHECK(r.find("scale")->values_per_entry == 8);

    test::SafetensorsBuilder fp;
    fp.metadata("quant_type", "mxfp4").tensor("w", "U32", "[1,4]", std::vector<uint8_t>(16, 0)).tensor("w.scale", "U8", "[1,1]", {0x7D});
    const BlockScales rf = blob_block_scales(fp);
    CHECK(rf.find("scale")->values == std::vector<float>{0.25f});
    CHECK(rf.find("bias") == nullptr);
}
