// ggml block-quantized data as groups of codes: each group's codes and the value of each code in
// that group, so that statistics count codes instead of decoding values. Internal to core/quant.
//
// Contract: for Q4_0, Q4_1, IQ4_NL, Q4_K and IQ4_XS (16 codes) and Q5_0, Q5_1 and Q5_K (32
// codes) — the rows of ggml_type_table.h whose `codes` names a reader here —
// block_code_groups(type) is the group shape (32 values per group: a whole block of the
// 32-value types, one sub-block of the 256-value ones, whose sub-block scale the group's values
// carry), and {0, 0} for every other type. Decision: Q5_0 and Q5_1 are code groups although a
// group has as many codes as values (so as many weighted entries as values): their entries are
// tallied in one vector pass (code_group_stats.cpp), which costs less than ggml's decoding of
// them followed by the statistics of the decoded values (decode_bench: "by values"). Q5_K is
// also offset groups (below), which statistics take instead.
// read_block_code_groups writes, for `blocks` consecutive blocks at `bytes`, each group's 32 codes
// (in the order ggml lays the values out) to `codes` and its code values to
// `values` (`codes` floats per group): value c is what ggml's to_float gives for code c there (a
// NaN, from a NaN or infinite d, may differ in its payload), computed with ggml's arithmetic in
// ggml's order (this file is compiled without floating-point contraction). Every product in that
// arithmetic but IQ4_XS's d * (ls - 32) * table[q] is exact in float (at most 22 significant
// bits), so a ggml that fuses a multiply and an add rounds nothing differently; IQ4_XS's last step
// is a lone multiply. Values increase with the code for a positive scale (the IQ4 table increases)
// and decrease for a negative one.
#pragma once

#include <cstdint>

#include "mlens/quant/float_source.h"

namespace mlens {

CodeGroups block_code_groups(uint32_t ggml_type);

// Q5_K as offset groups (float_source.h) of 32 values (a sub-block) and 32 codes:
// block_offset_groups(type) is that shape ({0, 0} for every other type), and
// read_block_offset_groups writes each group's codes as read_block_code_groups does, its step
// d * sc and its offset -(dmin * m): ggml's value (d * sc) * q - dmin * m is step * q + offset,
// the product exact in float. Decision (decode_bench): Q5_K's statistics bin each of its values
// (32 distinct codes a group: no fewer entries than values) faster than they tally its code
// groups; Q4_K (16 codes a group) stays code groups, which tally half as many entries as values.
OffsetGroups block_offset_groups(uint32_t ggml_type);

void read_block_offset_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* steps, float* offsets);

void read_block_code_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values);

}  // namespace mlens
