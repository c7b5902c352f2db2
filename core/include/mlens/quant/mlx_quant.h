// The MLX quantization modes Ollama stores in safetensors tensor blobs (ollama-store.md §4.4):
// decoding groups exactly as MLX does, and a reference quantizer for tests and what-if studies.
//
// Contract:
//  - Packed values are 32-bit little-endian words; element j of a word occupies bits
//    [bits*j, bits*j + bits - 1] (low bits first). Groups of `group_size` values run along the
//    row and share one scale (and, for affine, one bias).
//  - affine (int4, int8): w = q * scale + bias, q unsigned in [0, 2^bits - 1], computed in float32.
//  - nvfp4: w = e2m1[q] * e4m3(scale byte); 4-bit codes.
//  - mxfp4: w = e2m1[q] * 2^(s - 127); mxfp8: w = e4m3(q) * 2^(s - 127); an exponent byte of
//    0xFF decodes to +inf as in MLX.
//  - A global scale (prequantized nvfp4) multiplies whole rows; TensorView applies it.
//  - mlx_quantize is our own reference quantizer, not MLX's bit-exact one: affine uses the
//    group's min and max (scale = (max - min) / (2^bits - 1), bias = min, q rounded to nearest);
//    nvfp4 takes the E4M3 nearest to amax / 6; mxfp4 / mxfp8 take the smallest power of two that
//    keeps amax within the element range (6, 448), so nothing saturates. Values are rounded to
//    the nearest code. `count` must be a multiple of group_size, group_size * bits a multiple of
//    32 (else E_RANGE).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "mlens/quant/float_source.h"
#include "mlens/result.h"

namespace mlens {

enum class MlxMode { affine, nvfp4, mxfp4, mxfp8 };

std::optional<MlxMode> mlx_mode_from_name(std::string_view mode);  // "affine", "nvfp4", ...
const char* mlx_mode_name(MlxMode mode);

// The decoded group scale of a stored scale byte (fp modes).
float mlx_fp_scale(MlxMode mode, uint8_t byte);

// Decodes `groups` consecutive groups of `group_size` values from `packed`
// (groups * group_size * bits / 8 bytes), with one decoded scale per group and, for affine,
// one bias per group.
void mlx_dequantize(MlxMode mode, uint32_t bits, uint64_t group_size, const uint8_t* packed, const float* scales, const float* biases,
                    uint64_t groups, float* out);

// The least and greatest value mlx_dequantize gives for `groups` affine groups, from each group's
// least and greatest code (w is monotone in q for a fixed scale and bias); nullopt when one is NaN
// or infinite.
std::optional<ValueBounds> mlx_affine_range(uint32_t bits, uint64_t group_size, const uint8_t* packed, const float* scales,
                                            const float* biases, uint64_t groups);

// The codes of `groups` affine 4-bit groups (in stored order) and each group's 16 code values, as
// mlx_dequantize decodes them (values + 16 * g, increasing with the code for a positive scale).
void mlx_affine4_code_groups(uint64_t group_size, const uint8_t* packed, const float* scales, const float* biases, uint64_t groups,
                             uint8_t* codes, float* values);

struct MlxQuantized {
    std::vector<uint32_t> packed;
    std::vector<float> scales;  // decoded scale per group
    std::vector<float> biases;  // affine only
    std::vector<uint8_t> scale_bytes;  // fp modes: the stored scale bytes
};

Result<MlxQuantized> mlx_quantize(MlxMode mode, uint32_t bits, uint64_t group_size, const float* values, uint64_t count);

}  // namespace mlens
