// ggml block-quantized data as scaled groups (float_source.h): each group's signed integer codes
// and its step, so that statistics compute values from codes as they bin and sum them. Internal
// to core/quant.
//
// Contract: for Q8_0 (groups of 32: a block) and Q6_K (groups of 16: a sub-block) — the rows of
// ggml_type_table.h whose `steps` names a reader here — block_scaled_groups(type) is the group
// length, and 0 for every other type. read_block_scaled_groups writes, for `blocks` consecutive
// blocks at `bytes`, each group's codes (in ggml's value order) to `codes` and its step to
// `steps`: Q8_0 the stored codes and step d; Q6_K the 6-bit code - 32 and step d * sc. ggml's
// to_float computes each value as that product, from a float16 d (11 significant bits): a step
// has at most 18 significant bits (Q6_K's d times an 8-bit sc) and a product at most 23 (Q6_K:
// 18 bits times |code - 32| <= 32; Q8_0: 11 bits times 8), so it is exact in float and step *
// code computed here is ggml's value bit for bit. Types whose values add an offset are not
// scaled groups: Q5_K is offset groups, the others code groups (block_codes.h).
#pragma once

#include <cstdint>

namespace mlens {

uint32_t block_scaled_groups(uint32_t ggml_type);

void read_block_scaled_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps);

}  // namespace mlens
