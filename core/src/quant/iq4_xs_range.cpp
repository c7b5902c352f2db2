#include "iq4_xs_range.h"

#include <cstring>

#include "block_fields_avx512.h"
#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

constexpr uint32_t kBlockBytes = 136;

// Of the 64 code bytes at `q` (sub-blocks 4p to 4p + 3 of a block, one per 128-bit lane), each
// sub-block's least code and the complement (15 - code) of its greatest, folded by fold_lane_ends.
MLENS_EXTREMES_TARGET inline __m512i quarter_ends(const uint8_t* q) {
    const __m512i nibble = _mm512_set1_epi8(15);
    const __m512i v = _mm512_loadu_si512(q);
    const __m512i low = _mm512_and_si512(v, nibble), high = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    return fold_lane_ends(_mm512_min_epu8(low, high), _mm512_min_epu8(_mm512_sub_epi8(nibble, low), _mm512_sub_epi8(nibble, high)));
}

MLENS_EXTREMES_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks) {
    VectorExtremes extremes;
    const __m512 table = iq4_table();
    // Lane i of each block's eight: the shifts that bring ls_i's low and high bits down.
    const __m512i low_shift = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
    const __m512i high_shift = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14);
    for (uint64_t b = 0; b < blocks; b += 2) {
        const uint8_t* first = bytes + b * kBlockBytes;
        const bool pair = b + 1 < blocks;
        const uint8_t* second = pair ? first + kBlockBytes : first;
        const auto lanes = static_cast<__mmask16>(pair ? 0xFFFF : 0x00FF);
        uint16_t d16[2], high[2];
        uint32_t low[2];
        const uint8_t* block[2] = {first, second};
        for (int i = 0; i < 2; ++i) {
            std::memcpy(&d16[i], block[i], 2);
            std::memcpy(&high[i], block[i] + 2, 2);
            std::memcpy(&low[i], block[i] + 4, 4);
        }
        const __m512 d =
            _mm512_cvtph_ps(_mm256_set_m128i(_mm_set1_epi16(static_cast<short>(d16[1])), _mm_set1_epi16(static_cast<short>(d16[0]))));
        const __m512i low_bits =
            _mm512_inserti64x4(_mm512_set1_epi32(static_cast<int>(low[0])), _mm256_set1_epi32(static_cast<int>(low[1])), 1);
        const __m512i high_bits = _mm512_inserti64x4(_mm512_set1_epi32(high[0]), _mm256_set1_epi32(high[1]), 1);
        const __m512i ls =
            _mm512_or_si512(_mm512_and_si512(_mm512_srlv_epi32(low_bits, low_shift), _mm512_set1_epi32(15)),
                            _mm512_slli_epi32(_mm512_and_si512(_mm512_srlv_epi32(high_bits, high_shift), _mm512_set1_epi32(3)), 4));
        const __m512 step = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(ls, _mm512_set1_epi32(32))));
        // Each sub-block's values lie between those of codes 0 and 15 (the table increases): a
        // pair all of whose sub-blocks lie within the extremes seen changes nothing, and its codes
        // are not read.
        const __m512 none = _mm512_mul_ps(step, _mm512_set1_ps(static_cast<float>(kIq4Values[0])));
        const __m512 all = _mm512_mul_ps(step, _mm512_set1_ps(static_cast<float>(kIq4Values[15])));
        if (extremes.covers_span(lanes, none, all)) continue;
        // Sub-block j's least code in byte 2j, its complemented greatest in byte 2j + 1.
        alignas(32) uint8_t folded[32];
        for (int i = 0; i < 2; ++i)
            for (int p = 0; p < 2; ++p)
                _mm_storel_epi64(reinterpret_cast<__m128i*>(folded + 16 * i + 8 * p),
                                 _mm512_cvtepi64_epi8(quarter_ends(block[i] + 8 + 64 * p)));
        const __m512i ends = _mm512_cvtepu16_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(folded)));
        const __m512i least = _mm512_and_si512(ends, _mm512_set1_epi32(0xFF));
        const __m512i greatest = _mm512_sub_epi32(_mm512_set1_epi32(15), _mm512_srli_epi32(ends, 8));
        extremes.add(lanes, _mm512_mul_ps(step, _mm512_permutexvar_ps(least, table)),
                     _mm512_mul_ps(step, _mm512_permutexvar_ps(greatest, table)));
    }
    return extremes.bounds();
}

}  // namespace

bool iq4_xs_range_available() { return extremes_target_supported(); }

std::optional<ValueBounds> iq4_xs_range(const uint8_t* bytes, uint64_t blocks) { return range_avx512(bytes, blocks); }

#else

bool iq4_xs_range_available() { return false; }

std::optional<ValueBounds> iq4_xs_range(const uint8_t*, uint64_t) { return std::nullopt; }

#endif

}  // namespace mlens
