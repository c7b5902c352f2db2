// Exact extremes of the 32-value ggml block types whose 32 codes are the two nibbles of 16 bytes
// (Q4_0, Q4_1, IQ4_NL), with a fifth bit for the 5-bit ones (Q5_0, Q5_1), with AVX-512: sixteen
// blocks at a time, no per-block scalar work but the copy of their float16 fields (and fifth-bit
// fields). Internal to core/quant; block_range.cpp calls it where the CPU has AVX-512 and reads
// block by block otherwise.
//
// Contract: small_block_range(bytes, blocks, layout) is the least and greatest value that ggml's
// to_float decodes from `blocks` blocks at `bytes` of the layout's type, computed with ggml's
// arithmetic in ggml's order (one rounding per operation; this file is compiled without
// floating-point contraction): code j (j < 16) is the low nibble and code j + 16 the high nibble
// of byte j of the 16 bytes at `codes_at`, plus, with `fifth`, bit j (bit j + 16) of the
// little-endian 32-bit field at `fifth_at` as its bit 4; a code c decodes to (c - bias) * d, or
// table[c] * d for IQ4_NL, plus m with `offset` (float16 d at 0, m at 2). Values are monotone in
// the code for the block's d, so the extremes are those of each block's least and greatest code.
// nullopt when an extreme is NaN or infinite, or when there are no blocks. Only to be called when
// small_block_range_available().
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

struct SmallBlockLayout {
    uint32_t block_bytes = 0, codes_at = 0;
    bool fifth = false;
    uint32_t fifth_at = 0;
    bool offset = false, iq4 = false;
    int32_t bias = 0;
};

bool small_block_range_available();

std::optional<ValueBounds> small_block_range(const uint8_t* bytes, uint64_t blocks, const SmallBlockLayout& layout);

}  // namespace mlens
