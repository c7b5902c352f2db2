#include "mlens/quant/mlx_quant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "mlens/quant/minifloat.h"
#include "mlens/util/name_table.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// 2^e for the smallest e with amax / 2^e <= limit (exponent clamped to the E8M0 range).
uint8_t mx_exponent(float amax, float limit) {
    if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
    int k = 0;
    float m = std::frexp(amax / limit, &k);  // amax/limit = m * 2^k, m in [0.5, 1)
    int e = m == 0.5f ? k - 1 : k;
    return static_cast<uint8_t>(std::clamp(e + 127, 0, 254));
}

}  // namespace

constexpr NameRow<MlxMode> kMlxModeNames[] = {
    {MlxMode::affine, "affine"}, {MlxMode::nvfp4, "nvfp4"}, {MlxMode::mxfp4, "mxfp4"}, {MlxMode::mxfp8, "mxfp8"}};

const char* mlx_mode_name(MlxMode mode) { return name_of(kMlxModeNames, mode); }

std::optional<MlxMode> mlx_mode_from_name(std::string_view mode) { return value_of(kMlxModeNames, mode); }

float mlx_fp_scale(MlxMode mode, uint8_t byte) { return mode == MlxMode::nvfp4 ? e4m3_value(byte) : e8m0_value(byte, E8m0Nan::inf); }

namespace {

// Affine groups: code * scale + bias, rounded after each operation (the file is compiled without
// floating-point contraction, so no variant fuses them). 4-bit codes are two per byte, low
// nibble first.
MLENS_VECTOR_LOOP void dequantize_affine(uint32_t bits, uint64_t group_size, const uint8_t* packed, const float* scales,
                                         const float* biases, uint64_t groups, float* out) {
    const uint64_t group_bytes = group_size * bits / 8;
    for (uint64_t g = 0; g < groups; ++g) {
        const float s = scales[g], b = biases[g];
        const uint8_t* p = packed + g * group_bytes;
        float* o = out + g * group_size;
        if (bits == 8) {
            for (uint64_t j = 0; j < group_size; ++j) o[j] = static_cast<float>(p[j]) * s + b;
            continue;
        }
        for (uint64_t j = 0; j < group_bytes; ++j) {
            o[2 * j] = static_cast<float>(p[j] & 15) * s + b;
            o[2 * j + 1] = static_cast<float>(p[j] >> 4) * s + b;
        }
    }
}

// FP4 (E2M1) and FP8 (E4M3) groups: the code's value times the group scale, through a table of
// the group's values.
void dequantize_fp(MlxMode mode, uint64_t group_size, const uint8_t* packed, const float* scales, uint64_t groups, float* out) {
    static const auto e4m3 = [] {
        std::array<float, 256> t{};
        for (int c = 0; c < 256; ++c) t[c] = e4m3_value(static_cast<uint8_t>(c));
        return t;
    }();
    const bool fp8 = mode == MlxMode::mxfp8;
    const uint64_t group_bytes = fp8 ? group_size : group_size / 2;
    for (uint64_t g = 0; g < groups; ++g) {
        const float s = scales[g];
        const uint8_t* p = packed + g * group_bytes;
        float* o = out + g * group_size;
        if (fp8) {
            for (uint64_t j = 0; j < group_size; ++j) o[j] = e4m3[p[j]] * s;
            continue;
        }
        float value[16];
        for (uint8_t c = 0; c < 16; ++c) value[c] = e2m1_value(c) * s;
        for (uint64_t j = 0; j < group_bytes; ++j) {
            o[2 * j] = value[p[j] & 15];
            o[2 * j + 1] = value[p[j] >> 4];
        }
    }
}

}  // namespace

MLENS_VECTOR_LOOP void mlx_affine4_code_groups(uint64_t group_size, const uint8_t* packed, const float* scales, const float* biases,
                                               uint64_t groups, uint8_t* codes, float* values) {
    const uint64_t group_bytes = group_size / 2;
    for (uint64_t g = 0; g < groups; ++g) {
        const uint8_t* p = packed + g * group_bytes;
        uint8_t* c = codes + g * group_size;
        for (uint64_t j = 0; j < group_bytes; ++j) {
            c[2 * j] = p[j] & 15;
            c[2 * j + 1] = p[j] >> 4;
        }
        const float s = scales[g], b = biases[g];
        for (int q = 0; q < 16; ++q) values[16 * g + q] = static_cast<float>(q) * s + b;
    }
}

void mlx_dequantize(MlxMode mode, uint32_t bits, uint64_t group_size, const uint8_t* packed, const float* scales, const float* biases,
                    uint64_t groups, float* out) {
    if (mode == MlxMode::affine)
        dequantize_affine(bits, group_size, packed, scales, biases, groups, out);
    else
        dequantize_fp(mode, group_size, packed, scales, groups, out);
}

namespace {

// Running least and greatest value over groups, each adding the values of its least and
// greatest code (in either order: a negative scale reverses them); not finite from the first NaN
// or infinite end on.
struct ValueExtremes {
    float lo = INFINITY, hi = -INFINITY;
    bool finite = true;

    void add(float a, float b) {
        finite = finite && std::isfinite(a) && std::isfinite(b);
        lo = std::min(lo, std::min(a, b));
        hi = std::max(hi, std::max(a, b));
    }
    // nullopt when an end was not finite, or when nothing was added.
    std::optional<ValueBounds> range() const {
        if (!finite || lo > hi) return std::nullopt;
        return ValueBounds{lo, hi};
    }
};

}  // namespace

MLENS_VECTOR_LOOP std::optional<ValueBounds> mlx_affine_range(uint32_t bits, uint64_t group_size, const uint8_t* packed,
                                                              const float* scales, const float* biases, uint64_t groups) {
    const uint64_t group_bytes = group_size * bits / 8;
    ValueExtremes x;
    for (uint64_t g = 0; g < groups; ++g) {
        const uint8_t* p = packed + g * group_bytes;
        uint8_t least = 255, greatest = 0;
        if (bits == 8) {
            for (uint64_t j = 0; j < group_bytes; ++j) {
                least = std::min(least, p[j]);
                greatest = std::max(greatest, p[j]);
            }
        } else {
            for (uint64_t j = 0; j < group_bytes; ++j) {
                const uint8_t low = p[j] & 15, high = p[j] >> 4;
                least = std::min(least, std::min(low, high));
                greatest = std::max(greatest, std::max(low, high));
            }
        }
        // The same arithmetic as dequantize_affine.
        x.add(static_cast<float>(least) * scales[g] + biases[g], static_cast<float>(greatest) * scales[g] + biases[g]);
    }
    return x.range();
}

Result<MlxQuantized> mlx_quantize(MlxMode mode, uint32_t bits, uint64_t group_size, const float* values, uint64_t count) {
    if (mode != MlxMode::affine) bits = mode == MlxMode::mxfp8 ? 8 : 4;
    if (bits == 0 || bits > 8 || 32 % bits != 0 || group_size == 0 || group_size * bits % 32 != 0 || count % group_size != 0)
        return Error{ErrorCode::E_RANGE, "group_size", std::nullopt, "values must fill whole groups of whole 32-bit words"};
    MlxQuantized q;
    const uint64_t groups = count / group_size;
    q.packed.assign(count * bits / 32, 0);
    q.scales.resize(groups);
    if (mode == MlxMode::affine)
        q.biases.resize(groups);
    else
        q.scale_bytes.resize(groups);
    auto put = [&](uint64_t index, uint32_t code) { q.packed[index * bits / 32] |= code << (index * bits % 32); };
    for (uint64_t g = 0; g < groups; ++g) {
        const float* v = values + g * group_size;
        float lo = v[0], hi = v[0], amax = 0;
        for (uint64_t j = 0; j < group_size; ++j) {
            lo = std::min(lo, v[j]);
            hi = std::max(hi, v[j]);
            amax = std::max(amax, std::fabs(v[j]));
        }
        if (mode == MlxMode::affine) {
            const float levels = static_cast<float>((1u << bits) - 1);
            const float s = (hi - lo) / levels;
            q.scales[g] = s;
            q.biases[g] = lo;
            for (uint64_t j = 0; j < group_size; ++j) {
                float code = s > 0 ? std::nearbyint((v[j] - lo) / s) : 0.0f;
                put(g * group_size + j, static_cast<uint32_t>(std::clamp(code, 0.0f, levels)));
            }
            continue;
        }
        uint8_t byte = mode == MlxMode::nvfp4 ? e4m3_from_float(amax / 6.0f) : mx_exponent(amax, mode == MlxMode::mxfp4 ? 6.0f : 448.0f);
        const float s = mlx_fp_scale(mode, byte);
        q.scale_bytes[g] = byte;
        q.scales[g] = s;
        for (uint64_t j = 0; j < group_size; ++j) {
            float x = s > 0 ? v[j] / s : 0.0f;
            put(g * group_size + j, mode == MlxMode::mxfp8 ? e4m3_from_float(x) : e2m1_from_float(x));
        }
    }
    return q;
}

}  // namespace mlens
