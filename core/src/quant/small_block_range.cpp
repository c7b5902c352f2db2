#include "small_block_range.h"

#include <cmath>
#include <cstring>

#include "block_fields_avx512.h"
#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

#define MLENS_SMALL_RANGE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))

// Of four blocks at `p`, each block's least code and the complement (top - code) of its greatest,
// in byte 0 of 64-bit lanes 2i and 2i + 1: the nibbles split (with their fifth bits), the lesser
// and the complemented greater code of each byte folded over the block's 128-bit lane.
MLENS_SMALL_RANGE_TARGET inline __m512i fold_four(const uint8_t* p, const SmallBlockLayout& s, __m512i top) {
    const __m512i nibble = _mm512_set1_epi8(15), bit4 = _mm512_set1_epi8(16);
    auto codes = [&](uint32_t i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i * s.block_bytes + s.codes_at)); };
    // Lane numbers are immediates: written out, so that no build (sanitizers, -O0) sees a variable.
    __m512i v = _mm512_castsi128_si512(codes(0));
    v = _mm512_inserti32x4(v, codes(1), 1);
    v = _mm512_inserti32x4(v, codes(2), 2);
    v = _mm512_inserti32x4(v, codes(3), 3);
    __m512i low = _mm512_and_si512(v, nibble), up = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    if (s.fifth) {
        uint64_t low_fifth = 0, high_fifth = 0;
        for (uint32_t i = 0; i < 4; ++i) {
            uint32_t high = 0;
            std::memcpy(&high, p + i * s.block_bytes + s.fifth_at, 4);  // as ggml reads it
            low_fifth |= static_cast<uint64_t>(high & 0xFFFF) << (16 * i);
            high_fifth |= static_cast<uint64_t>(high >> 16) << (16 * i);
        }
        low = _mm512_mask_add_epi8(low, low_fifth, low, bit4);
        up = _mm512_mask_add_epi8(up, high_fifth, up, bit4);
    }
    return fold_lane_ends(_mm512_min_epu8(low, up), _mm512_sub_epi8(top, _mm512_max_epu8(low, up)));
}

// The value of code c (16 lanes) for 16 blocks' d (and m).
MLENS_SMALL_RANGE_TARGET inline __m512 code_values(__m512i code, __m512 d, __m512 m, const SmallBlockLayout& s, __m512 table) {
    const __m512 f = s.iq4 ? _mm512_permutexvar_ps(code, table) : _mm512_cvtepi32_ps(_mm512_sub_epi32(code, _mm512_set1_epi32(s.bias)));
    const __m512 x = _mm512_mul_ps(f, d);
    return s.offset ? _mm512_add_ps(x, m) : x;
}

// Each 16 blocks: four folds, their least and complemented greatest codes widened to 32-bit lanes,
// the 16 d (and m) converted from float16 at once, both ends' values folded into the extremes.
MLENS_SMALL_RANGE_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks, const SmallBlockLayout& s) {
    const int top_code = s.fifth ? 31 : 15;
    const __m512i top = _mm512_set1_epi8(static_cast<char>(top_code));
    const __m512 table = iq4_table();
    VectorExtremes extremes;
    // Lanes past the last block stay zero (masked out below).
    alignas(32) uint8_t folded[32] = {};
    alignas(32) uint16_t d16[16] = {}, m16[16] = {};
    for (uint64_t b = 0; b < blocks; b += 16) {
        const uint64_t n = blocks - b < 16 ? blocks - b : 16;
        const uint8_t* p = bytes + b * s.block_bytes;
        const auto lanes = static_cast<__mmask16>(n == 16 ? 0xFFFF : (1u << n) - 1);
        if (n == 16) {
            for (uint32_t q = 0; q < 4; ++q)
                _mm_storel_epi64(reinterpret_cast<__m128i*>(folded + 8 * q),
                                 _mm512_cvtepi64_epi8(fold_four(p + 4 * q * s.block_bytes, s, top)));
        } else {
            // The last blocks one at a time: each block's codes as four copies of itself.
            for (uint64_t i = 0; i < n; ++i) {
                uint8_t copies[4 * 32];
                SmallBlockLayout one = s;
                one.block_bytes = 32;
                for (uint32_t c = 0; c < 4; ++c) std::memcpy(copies + 32 * c, p + i * s.block_bytes, s.block_bytes);
                alignas(16) uint8_t ends[16];
                _mm_store_si128(reinterpret_cast<__m128i*>(ends), _mm512_cvtepi64_epi8(fold_four(copies, one, top)));
                folded[2 * i] = ends[0];
                folded[2 * i + 1] = ends[1];
            }
        }
        for (uint64_t i = 0; i < n; ++i) {
            std::memcpy(&d16[i], p + i * s.block_bytes, 2);
            if (s.offset) std::memcpy(&m16[i], p + i * s.block_bytes + 2, 2);
        }
        const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d16)));
        const __m512 m = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m16)));
        const __m512i pairs = _mm512_cvtepu16_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(folded)));
        const __m512i least = _mm512_and_si512(pairs, _mm512_set1_epi32(0xFF));
        const __m512i greatest = _mm512_sub_epi32(_mm512_set1_epi32(top_code), _mm512_srli_epi32(pairs, 8));
        const __m512 a = code_values(least, d, m, s, table), z = code_values(greatest, d, m, s, table);
        extremes.add(lanes, a, z);
    }
    return extremes.bounds();
}

}  // namespace

bool small_block_range_available() { return extremes_target_supported(); }

std::optional<ValueBounds> small_block_range(const uint8_t* bytes, uint64_t blocks, const SmallBlockLayout& layout) {
    return range_avx512(bytes, blocks, layout);
}

#else

bool small_block_range_available() { return false; }

std::optional<ValueBounds> small_block_range(const uint8_t*, uint64_t, const SmallBlockLayout&) { return std::nullopt; }

#endif

}  // namespace mlens
