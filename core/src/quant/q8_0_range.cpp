#include "q8_0_range.h"

#include <cstring>

#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

constexpr uint32_t kBlockBytes = 34;

// 16-bit lanes 0, 2, ..., 30, then 1, 3, ..., 31.
alignas(64) constexpr uint16_t kDeinterleave[32] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30,
                                                    1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};

// Of blocks p and p + 1 (at most `count`, 1 or 2), in byte 0 of 64-bit lanes 0 and 2 (block p)
// and 4 and 6 (block p + 1): the least code and the complement (255 - code) of the greatest, codes
// taken as unsigned by flipping their sign bit.
MLENS_EXTREMES_TARGET inline __m512i fold_two(const uint8_t* p, uint64_t count) {
    const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80)), ones = _mm512_set1_epi8(static_cast<char>(0xFF));
    __m512i v = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)));
    v = _mm512_inserti64x4(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + (count > 1 ? kBlockBytes : 0) + 2)), 1);
    const __m512i least = _mm512_xor_si512(v, sign), most = _mm512_xor_si512(least, ones);
    // Each block's 32 bytes onto 16 in both of its 128-bit lanes, then least and most side by side.
    const __m512i l = _mm512_min_epu8(least, _mm512_shuffle_i64x2(least, least, 0xB1));
    const __m512i m = _mm512_min_epu8(most, _mm512_shuffle_i64x2(most, most, 0xB1));
    const __m512i both = _mm512_mask_blend_epi64(0xCC, l, m);
    return fold_lane_ends(both, both);
}

MLENS_EXTREMES_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks) {
    VectorExtremes extremes;
    for (uint64_t b = 0; b < blocks; b += 16) {
        const uint64_t n = blocks - b < 16 ? blocks - b : 16;
        const uint8_t* p = bytes + b * kBlockBytes;
        const auto lanes = static_cast<__mmask16>(n == 16 ? 0xFFFF : (1u << n) - 1);
        alignas(32) uint16_t d16[16] = {};
        for (uint64_t i = 0; i < n; ++i) std::memcpy(&d16[i], p + i * kBlockBytes, 2);
        const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d16)));
        // Each block's values lie between those of codes -128 and 127: sixteen blocks that all lie
        // within the extremes seen change nothing, and their codes are not read.
        const __m512 none = _mm512_mul_ps(d, _mm512_set1_ps(-128.0f)), all = _mm512_mul_ps(d, _mm512_set1_ps(127.0f));
        if (extremes.covers_span(lanes, none, all)) continue;
        // Per pair of blocks, bytes 0 and 2 of its eight: the first block's least and complemented
        // greatest; bytes 4 and 6 the second's. Lanes past the last block stay zero (masked out).
        alignas(64) uint8_t folded[64] = {};
        for (uint64_t i = 0; i < n; i += 2)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(folded + 4 * i), _mm512_cvtepi64_epi8(fold_two(p + i * kBlockBytes, n - i)));
        // 16-bit lane 2k is block k's least code, lane 2k + 1 its complemented greatest.
        const __m512i words = _mm512_and_si512(_mm512_load_si512(folded), _mm512_set1_epi16(0xFF));
        const __m512i pairs = _mm512_permutexvar_epi16(_mm512_load_si512(kDeinterleave), words);
        const __m512i least = _mm512_sub_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(pairs)), _mm512_set1_epi32(128));
        const __m512i greatest = _mm512_sub_epi32(_mm512_set1_epi32(127), _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(pairs, 1)));
        extremes.add(lanes, _mm512_mul_ps(_mm512_cvtepi32_ps(least), d), _mm512_mul_ps(_mm512_cvtepi32_ps(greatest), d));
    }
    return extremes.bounds();
}

}  // namespace

bool q8_0_range_available() { return extremes_target_supported(); }

std::optional<ValueBounds> q8_0_range(const uint8_t* bytes, uint64_t blocks) { return range_avx512(bytes, blocks); }

#else

bool q8_0_range_available() { return false; }

std::optional<ValueBounds> q8_0_range(const uint8_t*, uint64_t) { return std::nullopt; }

#endif

}  // namespace mlens
