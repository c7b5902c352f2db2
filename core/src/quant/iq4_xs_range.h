// Exact extremes of IQ4_XS blocks with AVX-512: two 256-value blocks (sixteen 32-value
// sub-blocks) at a time, their codes' least and greatest folded in vectors, their 6-bit scales
// unpacked and their end values computed in one; a pair whose sub-blocks' values at codes 0 and
// 15 (between which all of their values lie) are within the extremes already seen is not read
// further. Internal to core/quant; block_range.cpp calls it where the CPU has AVX-512 and reads
// sub-block by sub-block otherwise.
//
// Contract: iq4_xs_range(bytes, blocks) is the least and greatest value that ggml's to_float
// decodes from `blocks` IQ4_XS blocks at `bytes` (136 bytes each: a float16 d, 16 bits of high
// scale bits, 4 bytes of low scale bits, 128 bytes of codes): sub-block i (16 bytes of nibble
// pairs) decodes code q to (d * (ls_i - 32)) * table[q], one rounding per operation, with ls_i's
// low four bits the nibble i % 2 of low-scale byte i / 2 and its high two bits bits 2i, 2i + 1 of
// the high scale bits, and table ggml's kvalues_iq4nl (block_fields.h's kIq4Values, increasing).
// Values are monotone in the code, so the extremes are those of each sub-block's least and
// greatest code. nullopt when an extreme is NaN or infinite, or when there are no blocks. Only
// to be called when iq4_xs_range_available().
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

bool iq4_xs_range_available();

std::optional<ValueBounds> iq4_xs_range(const uint8_t* bytes, uint64_t blocks);

}  // namespace mlens
