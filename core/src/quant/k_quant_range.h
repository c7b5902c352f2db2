// Exact extremes of Q4_K and Q5_K blocks with AVX-512: two 256-value blocks (sixteen 32-value
// sub-blocks) at a time, their codes' least and greatest and their 6-bit scales and mins unpacked
// in vectors; a block whose sub-blocks' values at codes 0 and top (between which all of its values
// lie) are within the extremes already seen is not read further. Internal to core/quant; block_range.cpp calls it where the CPU has AVX-512 and
// reads sub-block by sub-block otherwise.
//
// Contract: k_quant_range(bytes, blocks, fifth) is the least and greatest value that ggml's
// to_float decodes from `blocks` Q4_K (fifth false: 144-byte blocks) or Q5_K (fifth true:
// 176-byte blocks) blocks at `bytes`: sub-block j decodes code q to (d * sc_j) * q - dmin * m_j,
// one rounding per operation (this file is compiled without floating-point contraction), with
// sc_j and m_j as ggml's get_scale_min_k4 unpacks them and q the low (j even) or high (j odd)
// nibbles of the 32 bytes 32 * (j / 2) from the nibbles' start, plus for Q5_K bit j of each of
// the 32 fifth-bit bytes as bit 4. Values are monotone in the code, so the extremes are those of
// each sub-block's least and greatest code. nullopt when an extreme is NaN or infinite, or when
// there are no blocks. Only to be called when k_quant_range_available().
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

bool k_quant_range_available();

std::optional<ValueBounds> k_quant_range(const uint8_t* bytes, uint64_t blocks, bool fifth);

}  // namespace mlens
