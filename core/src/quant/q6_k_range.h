// Exact extremes of Q6_K blocks with AVX-512: each block's sixteen 16-value sub-blocks at once,
// their codes unpacked and folded to their least and greatest in four vectors (one sub-block per
// 128-bit lane) and their end values computed in one; a block whose sub-blocks' values at codes
// 0 and 63 (between which all of its values lie) are within the extremes already seen is not
// read further. Internal to core/quant; block_range.cpp calls it where the CPU has AVX-512 and
// reads sub-block by sub-block otherwise.
//
// Contract: q6_k_range(bytes, blocks) is the least and greatest value that ggml's to_float
// decodes from `blocks` Q6_K blocks at `bytes` (210 bytes each: 128 bytes of low nibbles, 64 of
// two-bit pairs, 16 signed sub-block scales sc, a float16 d), sub-block j decoding code q (0..63,
// as block_fields.h's q6_k_code unpacks it) to (d * sc_j) * (q - 32), each product exact in float.
// Values are monotone in the code for the sub-block's step, so the extremes are those of each
// sub-block's least and greatest code. nullopt when an extreme is NaN or infinite, or when there
// are no blocks. Only to be called when q6_k_range_available().
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

bool q6_k_range_available();

std::optional<ValueBounds> q6_k_range(const uint8_t* bytes, uint64_t blocks);

}  // namespace mlens
