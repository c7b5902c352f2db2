// Exact extremes of Q8_0 blocks with AVX-512: sixteen blocks at a time, each block's least and
// greatest code folded in vectors and the sixteen blocks' end values computed in one; sixteen
// blocks whose values at codes -128 and 127 (between which all of their values lie) are within
// the extremes already seen are not read further. Internal to
// core/quant; block_range.cpp calls it where the CPU has AVX-512 and reads block by block
// otherwise.
//
// Contract: q8_0_range(bytes, blocks) is the least and greatest value that ggml's to_float
// decodes from `blocks` Q8_0 blocks at `bytes` (34 bytes each: a float16 d, then 32 signed codes q,
// each decoding to q * d, exact in float). Values are monotone in the code for the block's d, so
// the extremes are those of each block's least and greatest code. nullopt when an extreme is NaN
// or infinite, or when there are no blocks. Only to be called when q8_0_range_available().
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

bool q8_0_range_available();

std::optional<ValueBounds> q8_0_range(const uint8_t* bytes, uint64_t blocks);

}  // namespace mlens
