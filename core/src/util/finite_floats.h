// Finiteness of floats tested on their bits (exponent all ones: NaN or ±Inf), so that loops
// using the tests vectorize without floating-point compares. Internal to core.
#pragma once

#include <bit>
#include <cstdint>

namespace mlens {

inline bool finite_bits(float x) { return (std::bit_cast<uint32_t>(x) & 0x7f800000u) != 0x7f800000u; }

// True when none of the n values is NaN or infinite (a vector loop).
bool all_finite(const float* v, uint64_t n);

}  // namespace mlens
