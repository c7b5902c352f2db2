// Fields that ggml block readers take from many blocks at once, and codes that several readers
// unpack alike. Internal to core/quant.
//
// Contract: q6_k_code is the 6-bit code (0..63) of value l + 32k (l < 32, k < 4) of a Q6_K
// half whose 64 nibble bytes are at `ql` and 32 bytes of two-bit pairs at `qh`: the low (k < 2)
// or high nibble of ql[l + 32 (k % 2)] and bits 2k, 2k + 1 of qh[l], as ggml unpacks it.
// half_field gives the float16 stored at `offset` in each of `blocks` blocks of
// `block_bytes` bytes, decoded exactly to float, in a per-thread buffer that the next call with
// the same `which` (0 or 1, for types with two such fields) overwrites.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "element_decode.h"
#include "util/thread_scratch.h"

namespace mlens {

// ggml's IQ4_NL / IQ4_XS value table (increasing).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The 6-bit scale ls of sub-block i (< 8) of the IQ4_XS block at `block`: its low four bits the
// nibble i % 2 of low-scale byte 4 + i / 2, its high two bits bits 2i, 2i + 1 of the 16-bit high
// scale bits at byte 2; the sub-block's step is d * (ls - 32).
[[gnu::always_inline]] inline int iq4_xs_scale(const uint8_t* block, int i) {
    const auto high = static_cast<uint16_t>(block[2] | block[3] << 8);
    return ((block[4 + i / 2] >> 4 * (i % 2)) & 0xF) | (((high >> 2 * i) & 3) << 4);
}

[[gnu::always_inline]] inline uint8_t q6_k_code(const uint8_t* ql, const uint8_t* qh, int l, int k) {
    return static_cast<uint8_t>(((ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 15) | (((qh[l] >> (2 * k)) & 3) << 4));
}

inline const float* half_field(const uint8_t* bytes, uint64_t blocks, uint32_t block_bytes, uint32_t offset, int which = 0) {
    std::vector<uint8_t>& halves = thread_scratch<std::vector<uint8_t>>([] {});
    auto& values = thread_scratch<std::array<std::vector<float>, 2>>([] {});
    halves.resize(2 * blocks);
    values[which].resize(blocks);
    for (uint64_t b = 0; b < blocks; ++b) std::memcpy(&halves[2 * b], bytes + b * block_bytes + offset, 2);
    decode_elements(ElementType::f16, halves.data(), blocks, values[which].data());
    return values[which].data();
}

}  // namespace mlens
