// Byte order of GGUF tensor data: which bytes of each ggml type's blocks a big-endian GGUF stores
// reversed.
//
// Contract:
//  - A big-endian GGUF stores each multi-byte field of a tensor's blocks byte-reversed and every
//    one-byte field as it is. Which fields are multi-byte is defined, type by type, by gguf-py:
//    its endian converter (gguf-py/gguf/scripts/gguf_convert_endian.py) for F32, F16, BF16
//    (every element) and the block types Q1_0, Q4_0, Q8_0 (the f16 d at byte 0), Q4_K (d and dmin
//    at bytes 0 and 2), Q6_K (d at byte 208), TQ2_0 (d at byte 64), MXFP4 and NVFP4 (one-byte
//    fields only: nothing reversed); its writer in big-endian mode (GGUFWriter(endianess=BIG),
//    which the converter defers to for these) for I8, I16, I32, I64 and F64 (every element).
//    All of these types exist in the pinned ggml (0.5.0). Each type's layout is the big_endian
//    entry of its row in ggml_type_table.h.
//  - Every other type (Q4_1, Q5_*, Q2_K, Q3_K, Q5_K, the IQ types, TQ1_0, Q2_0, ...) has no
//    defined big-endian layout: its bytes in a big-endian file cannot be read as values.
//  - Reversing is its own inverse: the same call converts big-endian blocks to ggml's
//    little-endian layout and back.
#pragma once

#include <cstdint>
#include <string>

namespace mlens {

// Whether a big-endian GGUF tensor of this ggml type can be read (see the contract).
bool has_big_endian_layout(uint32_t ggml_type);

// Why a tensor of this type in a big-endian file is refused, naming the type and, in id order,
// the types that have a layout.
std::string big_endian_refusal(const std::string& type_name);

// Reverses the multi-byte fields of `n_blocks` whole blocks of a type with a big-endian layout
// (asserted), in place.
void reverse_block_fields(uint32_t ggml_type, uint8_t* blocks, uint64_t n_blocks);

}  // namespace mlens
