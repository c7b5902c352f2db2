#include "q6_k_range.h"

#include <cstring>

#include "block_fields_avx512.h"
#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

constexpr uint32_t kBlockBytes = 210;

// Of one half of a block (at `ql` and `qh`), its sub-blocks 0 to 3 or 4 to 7 (q6_k_half_codes),
// folded by fold_lane_ends: each one's least code and the complement (63 - code) of its greatest.
MLENS_EXTREMES_TARGET inline __m512i half_ends(const uint8_t* ql, const uint8_t* qh, bool upper) {
    const __m512i code = q6_k_half_codes(ql, qh, upper);
    return fold_lane_ends(code, _mm512_sub_epi8(_mm512_set1_epi8(63), code));
}

MLENS_EXTREMES_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks) {
    VectorExtremes extremes;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBlockBytes;
        const __m512 step = q6_k_steps(block);
        // Each sub-block's values lie between those of codes 0 and 63: a block all of whose
        // sub-blocks lie within the extremes seen changes nothing, and its codes are not read.
        const __m512 none = _mm512_mul_ps(step, _mm512_set1_ps(-32.0f)), all = _mm512_mul_ps(step, _mm512_set1_ps(31.0f));
        if (extremes.covers_span(0xFFFF, none, all)) continue;
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
