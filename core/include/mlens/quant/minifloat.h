// Small float formats used by safetensors dtypes and the MLX quantization modes
// (ollama-store.md §4.4), decoded to float32 exactly.
//
// Contract:
//  - e2m1_value: FP4 E2M1 code (low 4 bits used): bit 3 sign, low 3 bits index into
//    {0, 0.5, 1, 1.5, 2, 3, 4, 6}. Code 8 is -0.
//  - e4m3_value: FP8 E4M3 "FN" (bias 7, subnormals, no infinity, max 448); 0x7F and 0xFF are NaN.
//  - e5m2_value: FP8 E5M2 (IEEE-like, bias 15): the upper byte of a float16; 0x7C is +inf.
//  - e8m0_value: an unsigned exponent byte, 2^(s-127). s = 0 gives 2^-127. s = 0xFF is NaN in the
//    OCP/safetensors dtype (E8m0Nan::nan) and +inf as MLX decodes its mx scales (E8m0Nan::inf,
//    MLX builds the float from the bits s<<23).
//  - Decoding is table-driven; all functions are thread-safe.
#pragma once

#include <cstdint>

namespace mlens {

enum class E8m0Nan { nan, inf };

float e2m1_value(uint8_t code);
float e4m3_value(uint8_t byte);
float e5m2_value(uint8_t byte);
float e8m0_value(uint8_t byte, E8m0Nan top = E8m0Nan::nan);

// Nearest E4M3 byte to x (ties to even mantissa; |x| beyond 448 saturates to ±448; NaN gives 0x7F).
uint8_t e4m3_from_float(float x);
// Nearest E2M1 code to x (ties to the even code; beyond ±6 saturates).
uint8_t e2m1_from_float(float x);

}  // namespace mlens
