#include "q6_k_range.h"

#include <cstring>

#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

constexpr uint32_t kBlockBytes = 210;

// Of one half of a block (64 nibble bytes at `ql`, 32 bytes of two-bit pairs at `qh`), its
// sub-blocks 0 to 3 (`upper` false: the low nibbles, with bits 0-1 of each pair byte for nibble
// bytes 0-31 and bits 2-3 for 32-63) or 4 to 7 (the high nibbles, with bits 4-5 and 6-7), one per
// 128-bit lane, folded by fold_lane_ends: each lane's least code and the complement (63 - code) of
// its greatest.
MLENS_EXTREMES_TARGET inline __m512i half_ends(const uint8_t* ql, const uint8_t* qh, bool upper) {
    const __m512i q = _mm512_loadu_si512(ql);
    const __m512i pairs = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)));
    const __m512i nibble = _mm512_set1_epi8(15), fifth_and_sixth = _mm512_set1_epi8(0x30);
    // Shifts by 16-bit lane (bytes 0-31, then 32-63) that bring each code's two bits to bits 4-5;
    // what crosses from the neighbouring byte lands outside them.
    const __m512i by = _mm512_inserti64x4(_mm512_set1_epi16(upper ? 0 : 4), _mm256_set1_epi16(2), 1);
    const __m512i low = upper ? _mm512_and_si512(_mm512_srli_epi16(q, 4), nibble) : _mm512_and_si512(q, nibble);
    const __m512i high = upper ? _mm512_srlv_epi16(pairs, by) : _mm512_sllv_epi16(pairs, by);
    const __m512i code = _mm512_or_si512(low, _mm512_and_si512(high, fifth_and_sixth));
    return fold_lane_ends(code, _mm512_sub_epi8(_mm512_set1_epi8(63), code));
}

MLENS_EXTREMES_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks) {
    VectorExtremes extremes;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBlockBytes;
        uint16_t d16 = 0;
        std::memcpy(&d16, block + 208, 2);
        const __m512 d = _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(d16)));
        const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
        const __m512 step = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(scales)));
        // Each sub-block's values lie between those of codes 0 and 63: a block all of whose
        // sub-blocks lie within the extremes seen changes nothing, and its codes are not read.
        const __m512 none = _mm512_mul_ps(step, _mm512_set1_ps(-32.0f)), all = _mm512_mul_ps(step, _mm512_set1_ps(31.0f));
        if (extremes.covers(0xFFFF, _mm512_min_ps(none, all), _mm512_max_ps(none, all))) continue;
        // Sub-block j's least code in byte 2j, its complemented greatest in byte 2j + 1.
        alignas(32) uint8_t folded[32];
        for (int half = 0; half < 2; ++half)
            for (int upper = 0; upper < 2; ++upper)
                _mm_storel_epi64(reinterpret_cast<__m128i*>(folded + 16 * half + 8 * upper),
                                 _mm512_cvtepi64_epi8(half_ends(block + 64 * half, block + 128 + 32 * half, upper != 0)));
        const __m512i ends = _mm512_cvtepu16_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(folded)));
        const __m512i least = _mm512_sub_epi32(_mm512_and_si512(ends, _mm512_set1_epi32(0xFF)), _mm512_set1_epi32(32));
        const __m512i greatest = _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_srli_epi32(ends, 8));
        extremes.add(0xFFFF, _mm512_mul_ps(step, _mm512_cvtepi32_ps(least)), _mm512_mul_ps(step, _mm512_cvtepi32_ps(greatest)));
    }
    return extremes.bounds();
}

}  // namespace

bool q6_k_range_available() { return extremes_target_supported(); }

std::optional<ValueBounds> q6_k_range(const uint8_t* bytes, uint64_t blocks) { return range_avx512(bytes, blocks); }

#else

bool q6_k_range_available() { return false; }

std::optional<ValueBounds> q6_k_range(const uint8_t*, uint64_t) { return std::nullopt; }

#endif

}  // namespace mlens
