// Q6_K's 6-bit codes unpacked with AVX-512, half a block (128 values) in two vectors, for the
// readers that take Q6_K's codes in vectors (q6_k_range.cpp, block_steps.cpp). Internal to
// core/quant; x86-64 with GCC only.
//
// Contract: q6_k_half_codes(ql, qh, upper) is, for the half block whose 64 nibble bytes are at
// `ql` and 32 bytes of two-bit pairs at `qh`, the codes (0..63, as block_fields.h's q6_k_code
// unpacks them) of its values 0 to 63 (`upper` false: the low nibbles, with bits 0-1 of each pair
// byte for nibble bytes 0-31 and bits 2-3 for 32-63) or 64 to 127 (the high nibbles, with bits 4-5
// and 6-7), one byte each in value order: sub-blocks 0 to 3 (or 4 to 7) of the half, one per
// 128-bit lane. For callers compiled with MLENS_Q6_K_TARGET or a superset of it. Including it
// turns off GCC's uninitialized-value warnings for the rest of the file (util/avx512_intrinsics.h).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "util/avx512_intrinsics.h"

#include <cstdint>

#define MLENS_Q6_K_TARGET __attribute__((target("avx512f,avx512bw")))

namespace mlens {

[[gnu::always_inline]] MLENS_Q6_K_TARGET inline __m512i q6_k_half_codes(const uint8_t* ql, const uint8_t* qh, bool upper) {
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

}  // namespace mlens

#endif
