// block_fields.h's fields and codes taken with AVX-512, for the readers that take them in vectors
// (q6_k_range.cpp, iq4_xs_range.cpp, small_block_range.cpp, block_steps.cpp, block_codes.cpp).
// Internal to core/quant; x86-64 with GCC only. For callers compiled with MLENS_FIELDS_TARGET or a
// superset of it. Including it turns off GCC's uninitialized-value warnings for the rest of the
// file (util/avx512_intrinsics.h).
//
// Contract:
//  - q6_k_half_codes(ql, qh, upper) is, for the Q6_K half block whose 64 nibble bytes are at `ql`
//    and 32 bytes of two-bit pairs at `qh`, the codes (0..63, as q6_k_code unpacks them) of its
//    values 0 to 63 (`upper` false: the low nibbles, with bits 0-1 of each pair byte for nibble
//    bytes 0-31 and bits 2-3 for 32-63) or 64 to 127 (the high nibbles, with bits 4-5 and 6-7),
//    one byte each in value order: sub-blocks 0 to 3 (or 4 to 7) of the half, one per 128-bit lane.
//  - q6_k_steps(block) is the 16 steps d * sc_j of the Q6_K block at `block` (its 16 signed scales
//    at byte 192, its float16 d at 208), sub-block j in lane j, as ggml multiplies them.
//  - iq4_table() is kIq4Values as floats, code c in lane c.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "util/avx512_intrinsics.h"

#include <cstdint>
#include <cstring>

#include "block_fields.h"

#define MLENS_FIELDS_TARGET __attribute__((target("avx512f,avx512bw")))

namespace mlens {

[[gnu::always_inline]] MLENS_FIELDS_TARGET inline __m512i q6_k_half_codes(const uint8_t* ql, const uint8_t* qh, bool upper) {
    const __m512i q = _mm512_loadu_si512(ql);
    const __m512i pairs = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)));
    const __m512i nibble = _mm512_set1_epi8(15), fifth_and_sixth = _mm512_set1_epi8(0x30);
    // Shifts by 16-bit lane (bytes 0-31, then 32-63) that bring each code's two bits to bits 4-5;
    // what crosses from the neighbouring byte lands outside them.
    const __m512i by = _mm512_inserti64x4(_mm512_set1_epi16(upper ? 0 : 4), _mm256_set1_epi16(2), 1);
    const __m512i low = upper ? _mm512_and_si512(_mm512_srli_epi16(q, 4), nibble) : _mm512_and_si512(q, nibble);
    const __m512i high = upper ? _mm512_srlv_epi16(pairs, by) : _mm512_sllv_epi16(pairs, by);
    return _mm512_or_si512(low, _mm512_and_si512(high, fifth_and_sixth));
}

[[gnu::always_inline]] MLENS_FIELDS_TARGET inline __m512 q6_k_steps(const uint8_t* block) {
    uint16_t d16 = 0;
    std::memcpy(&d16, block + 208, 2);
    const __m512 d = _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(d16)));
    const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(scales)));
}

[[gnu::always_inline]] MLENS_FIELDS_TARGET inline __m512 iq4_table() {
    alignas(16) int8_t table[16];
    std::memcpy(table, kIq4Values, sizeof table);
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(table))));
}

}  // namespace mlens

#endif
