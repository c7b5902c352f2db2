// Exact extremes of ggml block-quantized data, found from each group's least and greatest code and
// its scales without decoding every value. Internal to core/quant.
//
// Contract: for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS (the rows of
// ggml_type_table.h whose `range` names a reader here), block_value_range(type, bytes, blocks)
// is the least and greatest value that ggml's to_float decodes from `blocks` consecutive blocks
// at `bytes`, computed with ggml's arithmetic in ggml's order (one rounding per operation; this
// file is compiled without floating-point contraction). Each of these types decodes a group of
// values as f(code) with f monotone in the code for the group's scales (the IQ4 value table
// increases), so the extremes are f of the group's least and greatest code. It is nullopt for
// every other type, and when an extreme is NaN or infinite. Decision: a ggml built to fuse the
// multiply and add of Q4_1, Q5_1, Q4_K or Q5_K into one multiply-add may round one value
// differently; statistics therefore check this range against the values they decode and count
// again when it differs (stats.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

bool has_block_value_range(uint32_t ggml_type);

std::optional<ValueBounds> block_value_range(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks);

}  // namespace mlens
