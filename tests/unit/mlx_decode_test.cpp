// Safetensors dtypes and Ollama/MLX quantized tensors decode as ollama-store.md §4.4 defines:
// hand-worked values per mode, one expert of a stacked tensor alone, quantize→dequantize error
// bounds, and clear errors for what cannot be decoded.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/minifloat.h"
#include "mlens/quant/mlx_quant.h"
#include "mlens/quant/tensor_view.h"
#include "model_fixture.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;

namespace {

// "[a,b]", appended piece by piece (GCC 12 warns falsely of overlapping copies when "[" + ... is
// chained with to_string).
std::string shape_2d(uint64_t a, uint64_t b) {
    std::string s = "[";
    s += std::to_string(a);
    s += ',';
    s += std::to_string(b);
    s += ']';
    return s;
}

template <typename T>
std::vector<uint8_t> le(std::initializer_list<T> values) {
    std::vector<uint8_t> out(values.size() * sizeof(T));
    size_t i = 0;
    for (T v : values) std::memcpy(out.data() + sizeof(T) * i++, &v, sizeof(T));
    return out;
}

std::vector<uint8_t> le_vec(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

Model open_blob(const SafetensorsBuilder& sb) {
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m);
    return m;
}

std::vector<float> decode(const Model& m, const std::string& name) {
    auto view = TensorView::open(m, name);
    INFO(name << ": " << (view ? std::string() : view.error().to_string()));
    REQUIRE(view.ok());
    std::vector<float> out(view->size());
    REQUIRE(view->read(0, out.size(), out.data()).ok());
    return out;
}

// Exact comparison that treats NaN as equal to NaN and keeps the sign of zero.
void require_same(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": got " << got[i] << " want " << want[i]);
        if (std::isnan(want[i]))
            REQUIRE(std::isnan(got[i]));
        else
            REQUIRE((got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i])));
    }
}

const float kNan = NAN;
const float kInf = INFINITY;

}  // namespace

TEST_CASE("safetensors dtypes decode element by element", "[mlx]") {
    SafetensorsBuilder sb;
    sb.tensor("f64", "F64", "[2]", le<double>({1.5, -2.25}))
        .tensor("f32", "F32", "[1]", le<float>({3.0f}))
        .tensor("f16", "F16", "[3]", le<uint16_t>({0x3C00, 0xC000, 0x0001}))
        .tensor("bf16", "BF16", "[2]", le<uint16_t>({0x3F80, 0xC0A0}))
        .tensor("i8", "I8", "[2]", {0x80, 0x7F})
        .tensor("i16", "I16", "[1]", le<int16_t>({-2}))
        .tensor("i32", "I32", "[1]", le<int32_t>({-100000}))
        .tensor("i64", "I64", "[1]", le<int64_t>({-3}))
        .tensor("u8", "U8", "[1]", {255})
        .tensor("u16", "U16", "[1]", le<uint16_t>({65535}))
        .tensor("u32", "U32", "[1]", le<uint32_t>({4000000000u}))
        .tensor("u64", "U64", "[1]", le<uint64_t>({1ull << 40}))
        .tensor("bool", "BOOL", "[3]", {0, 1, 2})
        .tensor("e4m3", "F8_E4M3", "[6]", {0x38, 0x7E, 0x01, 0xB8, 0x7F, 0x08})
        .tensor("e5m2", "F8_E5M2", "[5]", {0x3C, 0x7C, 0x01, 0xC2, 0x7B})
        .tensor("e8m0", "F8_E8M0", "[4]", {127, 0, 130, 255})
        .tensor("f4", "F4", "[2]", {0x21})
        .tensor("c64", "C64", "[1]", std::vector<uint8_t>(8, 0));
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    require_same(decode(m, "f64"), {1.5f, -2.25f});
    require_same(decode(m, "f32"), {3.0f});
    require_same(decode(m, "f16"), {1.0f, -2.0f, 5.9604644775390625e-08f});
    require_same(decode(m, "bf16"), {1.0f, -5.0f});
    require_same(decode(m, "i8"), {-128.0f, 127.0f});
    require_same(decode(m, "i16"), {-2.0f});
    require_same(decode(m, "i32"), {-100000.0f});
    require_same(decode(m, "i64"), {-3.0f});
    require_same(decode(m, "u8"), {255.0f});
    require_same(decode(m, "u16"), {65535.0f});
    require_same(decode(m, "u32"), {4000000000.0f});
    require_same(decode(m, "u64"), {1099511627776.0f});
    require_same(decode(m, "bool"), {0.0f, 1.0f, 1.0f});
    require_same(decode(m, "e4m3"), {1.0f, 448.0f, 0.001953125f, -1.0f, kNan, 0.015625f});
    require_same(decode(m, "e5m2"), {1.0f, kInf, 1.52587890625e-05f, -3.0f, 57344.0f});
    require_same(decode(m, "e8m0"), {1.0f, std::ldexp(1.0f, -127), 8.0f, kNan});
    for (const char* name : {"f4", "c64"}) {
        auto view = TensorView::open(m, name);
        REQUIRE_FALSE(view.ok());
        CHECK(view.error().code == ErrorCode::E_UNSUPPORTED_TYPE);
        CHECK(view.error().field == name);
    }
}

TEST_CASE("int4 and int8 affine: w = q * scale + bias, low bits first", "[mlx]") {
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4")
        .metadata("group_size", "8")
        .tensor("w", "U32", "[2,1]", le<uint32_t>({0x76543210u, 0xFEDCBA98u}))
        .tensor("w.scale", "F32", "[2,1]", le<float>({0.5f, 2.0f}))
        .tensor("w.bias", "F32", "[2,1]", le<float>({-1.0f, 1.0f}));
    Model m = open_blob(sb);
    auto view = TensorView::open(m, "w");
    REQUIRE(view.ok());
    CHECK(view->shape() == std::vector<uint64_t>{8, 2});
    CHECK(view->type_name() == "int4 g8");
    require_same(decode(m, "w"), {-1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f, 17, 19, 21, 23, 25, 27, 29, 31});

    SafetensorsBuilder sb8;
    sb8.metadata("quant_type", "int8")
        .metadata("group_size", "4")
        .tensor("w", "U32", "[1,1]", le<uint32_t>({0x80FF0102u}))
        .tensor("w.scale", "BF16", "[1,1]", le<uint16_t>({0x3E80}))  // 0.25
        .tensor("w.bias", "BF16", "[1,1]", le<uint16_t>({0xC200}));  // -32
    require_same(decode(open_blob(sb8), "w"), {-31.5f, -31.75f, 31.75f, 0.0f});
}

TEST_CASE("nvfp4: E2M1 codes times an E4M3 scale, with and without a global scale", "[mlx]") {
    const std::vector<uint8_t> packed = le<uint32_t>({0x76543210u, 0xFEDCBA98u, 0x11111111u, 0x22222222u});
    const std::vector<float> row0 = {0, 1.5f, 3, 4.5f, 6, 9, 12, 18, -0.0f, -1.5f, -3, -4.5f, -6, -9, -12, -18};
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "nvfp4").tensor("w", "U32", "[2,2]", packed).tensor("w.scale", "U8", "[2,1]", {0x44, 0x38});  // 3.0, 1.0
    std::vector<float> want = row0;
    for (int i = 0; i < 8; ++i) want.push_back(0.5f);
    for (int i = 0; i < 8; ++i) want.push_back(1.0f);
    require_same(decode(open_blob(sb), "w"), want);

    // A per-row global scale multiplies each row.
    SafetensorsBuilder per_row = sb;
    per_row.tensor("w.global_scale", "F32", "[2]", le<float>({0.5f, 4.0f}));
    std::vector<float> want_rows = want;
    for (size_t i = 0; i < 32; ++i) want_rows[i] *= i < 16 ? 0.5f : 4.0f;
    require_same(decode(open_blob(per_row), "w"), want_rows);

    // A scalar global scale multiplies everything.
    SafetensorsBuilder scalar = sb;
    scalar.tensor("w.global_scale", "F32", "[]", le<float>({0.25f}));
    std::vector<float> want_scalar = want;
    for (float& v : want_scalar) v *= 0.25f;
    require_same(decode(open_blob(scalar), "w"), want_scalar);
}

TEST_CASE("mxfp4: E2M1 codes times 2^(s-127), MLX's s=0 and s=255", "[mlx]") {
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "mxfp4")
        .tensor("w", "U32", "[3,4]",
                le<uint32_t>({0x76543210u, 0xFEDCBA98u, 0, 0x77777777u,  //
                              0x00000001u, 0, 0, 0,  //
                              0x00000007u, 0, 0, 0}))
        .tensor("w.scale", "U8", "[3,1]", {0x80, 0xFF, 0x00});
    std::vector<float> want = {0, 1, 2, 3, 4, 6, 8, 12, -0.0f, -1, -2, -3, -4, -6, -8, -12};
    want.resize(24, 0.0f);
    want.resize(32, 12.0f);
    want.push_back(kInf);  // 0.5 * inf
    want.resize(64, kNan);  // 0 * inf
    want.push_back(6.0f * std::ldexp(1.0f, -127));
    want.resize(96, 0.0f);
    require_same(decode(open_blob(sb), "w"), want);
}

TEST_CASE("mxfp8: E4M3 bytes times 2^(s-127)", "[mlx]") {
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "mxfp8")
        .tensor("w", "U32", "[1,8]", le<uint32_t>({0x01FE7E38u, 0x7FB84008u, 0, 0, 0, 0, 0, 0}))
        .tensor("w.scale", "U8", "[1,1]", {0x81});  // 4
    std::vector<float> want = {4, 1792, -1792, 0.0078125f, 0.0625f, 8, -4, kNan};
    want.resize(32, 0.0f);
    require_same(decode(open_blob(sb), "w"), want);
}

TEST_CASE("one expert of a stacked MLX tensor decodes alone", "[mlx]") {
    const std::vector<float> values = test_signal(3 * 2 * 64, 5);
    auto q = mlx_quantize(MlxMode::affine, 4, 32, values.data(), values.size());
    REQUIRE(q.ok());
    SafetensorsBuilder real;
    std::vector<uint8_t> packed(q->packed.size() * 4);
    std::memcpy(packed.data(), q->packed.data(), packed.size());
    real.metadata("quant_type", "int4")
        .metadata("group_size", "32")
        .tensor("e.weight", "U32", "[3,2,8]", packed)
        .tensor("e.weight.scale", "F32", "[3,2,2]", le_vec(q->scales))
        .tensor("e.weight.bias", "F32", "[3,2,2]", le_vec(q->biases));
    Model m = open_blob(real);
    auto view = TensorView::open(m, "e.weight");
    REQUIRE(view.ok());
    CHECK(view->shape() == std::vector<uint64_t>{64, 2, 3});
    std::vector<float> all(view->size()), want(values.size());
    REQUIRE(view->read(0, all.size(), all.data()).ok());
    mlx_dequantize(MlxMode::affine, 4, 32, packed.data(), q->scales.data(), q->biases.data(), values.size() / 32, want.data());
    require_same(all, want);
    auto expert = view->slice(2);
    REQUIRE(expert.ok());
    CHECK(expert->shape() == std::vector<uint64_t>{64, 2});
    std::vector<float> one(expert->size());
    REQUIRE(one.size() == 128);
    REQUIRE(expert->read(0, one.size(), one.data()).ok());
    require_same(one, std::vector<float>(all.begin() + 256, all.end()));
    std::vector<float> scales(4), biases(4);
    REQUIRE(expert->read_group_params(0, 4, scales.data(), biases.data()).ok());
    CHECK(scales == std::vector<float>(q->scales.begin() + 8, q->scales.end()));
    CHECK(biases == std::vector<float>(q->biases.begin() + 8, q->biases.end()));
    CHECK(view->slice(3).error().code == ErrorCode::E_RANGE);
}

TEST_CASE("quantize then dequantize stays within each mode's error bound", "[mlx]") {
    const uint64_t cols = 256, rows = 16;
    const std::vector<float> values = test_signal(cols * rows, 9);
    struct Case {
        const char* type;
        MlxMode mode;
        uint32_t bits;
        uint64_t group;
    };
    const Case cases[] = {{"int4", MlxMode::affine, 4, 64},
                          {"int8", MlxMode::affine, 8, 64},
                          {"nvfp4", MlxMode::nvfp4, 4, 16},
                          {"mxfp4", MlxMode::mxfp4, 4, 32},
                          {"mxfp8", MlxMode::mxfp8, 8, 32}};
    for (const Case& c : cases) {
        INFO(c.type);
        auto q = mlx_quantize(c.mode, c.bits, c.group, values.data(), values.size());
        REQUIRE(q.ok());
        std::vector<uint8_t> packed(q->packed.size() * 4);
        std::memcpy(packed.data(), q->packed.data(), packed.size());
        const std::string packed_shape = shape_2d(rows, cols * c.bits / 32);
        const std::string scale_shape = shape_2d(rows, cols / c.group);
        SafetensorsBuilder sb;
        sb.metadata("quant_type", c.type).metadata("group_size", std::to_string(c.group)).tensor("w", "U32", packed_shape, packed);
        if (c.mode == MlxMode::affine)
            sb.tensor("w.scale", "F32", scale_shape, le_vec(q->scales)).tensor("w.bias", "F32", scale_shape, le_vec(q->biases));
        else
            sb.tensor("w.scale", "U8", scale_shape, q->scale_bytes);
        std::vector<float> got = decode(open_blob(sb), "w");
        REQUIRE(got.size() == values.size());
        double err2 = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            const double s = q->scales[i / c.group], err = std::fabs(got[i] - values[i]);
            double bound = c.mode == MlxMode::affine ? 0.5 * s
                : c.mode == MlxMode::mxfp8           ? std::max(std::fabs(double(values[i])) / 16, s / 1024)
                                                     : s;
            INFO("element " << i << " value " << values[i] << " decoded " << got[i]);
            REQUIRE(err <= bound * 1.0001 + 1e-7);
            err2 += err * err;
        }
        // Every mode keeps the signal: RMSE well below the signal's own RMS (about 0.48); E4M3 keeps
        // about 4% relative precision.
        CHECK(std::sqrt(err2 / got.size()) < (c.mode == MlxMode::affine && c.bits == 8 ? 0.01 : c.mode == MlxMode::mxfp8 ? 0.02 : 0.08));
    }
}

TEST_CASE("undecidable MLX quantization and broken companions are clear errors", "[mlx]") {
    SafetensorsBuilder sb;  // no quant_type, and a scale shape no rule fits
    sb.tensor("w", "U32", "[1,1]", le<uint32_t>({0}))
        .tensor("w.scale", "BF16", "[1,3]", std::vector<uint8_t>(6, 0))
        .tensor("w.bias", "BF16", "[1,3]", std::vector<uint8_t>(6, 0));
    Model m = open_blob(sb);
    auto view = TensorView::open(m, "w");
    REQUIRE_FALSE(view.ok());
    CHECK(view.error().code == ErrorCode::E_UNSUPPORTED_TYPE);
    CHECK(view.error().field == "w");

    SafetensorsBuilder missing_bias;  // affine without its bias
    missing_bias.metadata("quant_type", "int4")
        .metadata("group_size", "8")
        .tensor("w", "U32", "[1,1]", le<uint32_t>({0}))
        .tensor("w.scale", "F32", "[1,1]", le<float>({1}));
    Model mb = open_blob(missing_bias);
    auto v2 = TensorView::open(mb, "w");
    REQUIRE_FALSE(v2.ok());
    CHECK(v2.error().message == "the bias tensor is missing");

    SafetensorsBuilder bad_global;  // 3 global scales for 2 rows
    bad_global.metadata("quant_type", "nvfp4")
        .tensor("w", "U32", "[2,2]", std::vector<uint8_t>(16, 0))
        .tensor("w.scale", "U8", "[2,1]", {0x38, 0x38})
        .tensor("w.global_scale", "F32", "[3]", le<float>({1, 1, 1}));
    Model mg = open_blob(bad_global);
    auto v3 = TensorView::open(mg, "w");
    REQUIRE_FALSE(v3.ok());
    CHECK(v3.error().code == ErrorCode::E_SHAPE);
}

TEST_CASE("minifloat encoders round to the nearest code", "[mlx]") {
    CHECK(e4m3_from_float(1.0f) == 0x38);
    CHECK(e4m3_from_float(-448.0f) == 0xFE);
    CHECK(e4m3_from_float(1000.0f) == 0x7E);
    CHECK(e4m3_from_float(1.0625f) == 0x38);  // halfway between 1 and 1.125: even mantissa
    CHECK(e4m3_from_float(1.07f) == 0x39);
    CHECK(e2m1_from_float(5.0f) == 6);  // halfway between 4 and 6: even code (6 = 4.0)
    CHECK(e2m1_from_float(-5.1f) == 15);
    CHECK(e2m1_from_float(0.2f) == 0);
    CHECK(e2m1_from_float(100.0f) == 7);
}

TEST_CASE("group decoding equals the per-value definition bit for bit, in every mode", "[mlx]") {
    // Random packed bytes, scales and biases (some negative); every value must be exactly what
    // the definition gives with each operation rounded on its own (no fused multiply-add).
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> real(-2.0f, 2.0f);
    const struct {
        MlxMode mode;
        uint32_t bits;
    } modes[] = {{MlxMode::affine, 4}, {MlxMode::affine, 8}, {MlxMode::nvfp4, 4}, {MlxMode::mxfp4, 4}, {MlxMode::mxfp8, 8}};
    for (const auto& m : modes)
        for (uint64_t group : {16u, 32u, 64u}) {
            const uint64_t groups = 37, values = groups * group;
            std::vector<uint8_t> packed(values * m.bits / 8);
            for (uint8_t& b : packed) b = static_cast<uint8_t>(rng());
            std::vector<float> scales(groups), biases(groups), out(values);
            for (uint64_t g = 0; g < groups; ++g) {
                scales[g] = real(rng);
                biases[g] = real(rng);
            }
            mlx_dequantize(m.mode, m.bits, group, packed.data(), scales.data(), biases.data(), groups, out.data());
            for (uint64_t i = 0; i < values; ++i) {
                const uint64_t g = i / group;
                const uint32_t code = m.bits == 8 ? packed[i] : (packed[i / 2] >> (4 * (i % 2))) & 15u;
                volatile float product = 0;
                float expected = 0;
                if (m.mode == MlxMode::affine) {
                    product = static_cast<float>(code) * scales[g];
                    expected = product + biases[g];
                } else if (m.mode == MlxMode::mxfp8) {
                    expected = e4m3_value(static_cast<uint8_t>(code)) * scales[g];
                } else {
                    expected = e2m1_value(static_cast<uint8_t>(code)) * scales[g];
                }
                INFO(mlx_mode_name(m.mode) << " bits " << m.bits << " group " << group << " value " << i);
                if (std::isnan(expected))
                    CHECK(std::isnan(out[i]));
                else
                    CHECK(std::memcmp(&out[i], &expected, 4) == 0);
            }
        }
}

TEST_CASE("MLX mode names read back to their mode - an unknown name is no mode", "[mlx]") {
    for (MlxMode m : {MlxMode::affine, MlxMode::nvfp4, MlxMode::mxfp4, MlxMode::mxfp8}) CHECK(mlx_mode_from_name(mlx_mode_name(m)) == m);
    CHECK(std::string(mlx_mode_name(MlxMode::mxfp8)) == "mxfp8");
    CHECK_FALSE(mlx_mode_from_name("fp8"));
    CHECK_FALSE(mlx_mode_from_name(""));
}
