#include "k_quant_range.h"

#include <cmath>
#include <cstring>

#include "vector_extremes.h"

namespace mlens {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

#define MLENS_K_RANGE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,f16c")))

// Each 32-byte half of x folded onto its 16 bytes, in both of its 128-bit lanes.
MLENS_K_RANGE_TARGET inline __m512i fold_halves(__m512i x) { return _mm512_min_epu8(x, _mm512_shuffle_i64x2(x, x, 0xB1)); }

// Bit a in every byte of the lower 32, bit b in every byte of the upper 32.
MLENS_K_RANGE_TARGET inline __m512i bits(int a, int b) {
    return _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << a)), _mm256_set1_epi8(static_cast<char>(1 << b)), 1);
}

// Of the 64 nibble bytes of pairs p and p + 1 at `q` (Q5_K: with its 32 fifth-bit bytes at `high`),
// sub-blocks 2p to 2p + 3: each one's least code and the complement (top - code) of its greatest
// in byte 0 of 64-bit lanes 2i and 2i + 1, i = 0..3.
MLENS_K_RANGE_TARGET inline __m512i fold_pairs(const uint8_t* q, const uint8_t* high, int p, __m512i top) {
    const __m512i nibble = _mm512_set1_epi8(15), bit4 = _mm512_set1_epi8(16);
    const __m512i v = _mm512_loadu_si512(q);
    __m512i low = _mm512_and_si512(v, nibble), up = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    if (high) {
        const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(high)));
        low = _mm512_mask_add_epi8(low, _mm512_test_epi8_mask(h, bits(2 * p, 2 * p + 2)), low, bit4);
        up = _mm512_mask_add_epi8(up, _mm512_test_epi8_mask(h, bits(2 * p + 1, 2 * p + 3)), up, bit4);
    }
    const __m512i least_low = fold_halves(low), least_up = fold_halves(up);
    const __m512i most_low = fold_halves(_mm512_sub_epi8(top, low)), most_up = fold_halves(_mm512_sub_epi8(top, up));
    // 128-bit lanes in sub-block order: 2p (low nibbles of pair p), 2p + 1, 2p + 2, 2p + 3.
    return fold_lane_ends(_mm512_mask_blend_epi64(0xCC, least_low, least_up), _mm512_mask_blend_epi64(0xCC, most_low, most_up));
}

// For _mm512_maskz_permutexvar_epi8 over the two blocks' scale bytes (block i's 12 at 16 * i):
// byte 0 of 32-bit lane L (block L / 8, sub-block j = L % 8) picks that block's byte pick(j).
template <typename Pick>
MLENS_K_RANGE_TARGET inline __m512i scale_index(Pick pick) {
    alignas(64) uint8_t index[64] = {};
    for (int lane = 0; lane < 16; ++lane) index[4 * lane] = static_cast<uint8_t>(16 * (lane / 8) + pick(lane % 8));
    return _mm512_load_si512(index);
}

MLENS_K_RANGE_TARGET std::optional<ValueBounds> range_avx512(const uint8_t* bytes, uint64_t blocks, bool fifth) {
    const uint32_t block_bytes = fifth ? 176 : 144, nibbles = fifth ? 48 : 16;
    const int top_code = fifth ? 31 : 15;
    const __m512i top = _mm512_set1_epi8(static_cast<char>(top_code));
    VectorExtremes extremes;
    const __mmask16 upper_four = 0xF0F0;
    const __mmask64 byte0 = 0x1111111111111111ull;
    // get_scale_min_k4's bytes: a = byte j (j < 4) or j + 4, b = byte j + 4 or j - 4, c = byte j.
    const __m512i index_a = scale_index([](int j) { return j < 4 ? j : j + 4; });
    const __m512i index_b = scale_index([](int j) { return j < 4 ? j + 4 : j - 4; });
    const __m512i index_c = scale_index([](int j) { return j; });
    for (uint64_t b = 0; b < blocks; b += 2) {
        const uint8_t* first = bytes + b * block_bytes;
        const bool pair = b + 1 < blocks;
        const uint8_t* second = pair ? first + block_bytes : first;
        const auto lanes = static_cast<__mmask16>(pair ? 0xFFFF : 0x00FF);
        alignas(64) uint8_t raw[64] = {};
        std::memcpy(raw, first + 4, 12);
        std::memcpy(raw + 16, second + 4, 12);
        const __m512i table = _mm512_load_si512(raw);
        const __m512i a = _mm512_maskz_permutexvar_epi8(byte0, index_a, table);
        const __m512i bb = _mm512_maskz_permutexvar_epi8(byte0, index_b, table);
        const __m512i c = _mm512_maskz_permutexvar_epi8(byte0, index_c, table);
        const __m512i six = _mm512_set1_epi32(63), four = _mm512_set1_epi32(15);
        const __m512i sc =
            _mm512_mask_blend_epi32(upper_four, _mm512_and_si512(a, six),
                                    _mm512_or_si512(_mm512_and_si512(a, four), _mm512_slli_epi32(_mm512_srli_epi32(bb, 6), 4)));
        const __m512i m = _mm512_mask_blend_epi32(upper_four, _mm512_and_si512(bb, six),
                                                  _mm512_or_si512(_mm512_srli_epi32(a, 4), _mm512_slli_epi32(_mm512_srli_epi32(c, 6), 4)));
        uint16_t h[4];
        std::memcpy(&h[0], first, 2);
        std::memcpy(&h[1], first + 2, 2);
        std::memcpy(&h[2], second, 2);
        std::memcpy(&h[3], second + 2, 2);
        const __m512 d =
            _mm512_cvtph_ps(_mm256_set_m128i(_mm_set1_epi16(static_cast<short>(h[2])), _mm_set1_epi16(static_cast<short>(h[0]))));
        const __m512 dmin =
            _mm512_cvtph_ps(_mm256_set_m128i(_mm_set1_epi16(static_cast<short>(h[3])), _mm_set1_epi16(static_cast<short>(h[1]))));
        const __m512 step = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)), shift = _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m));
        // Each sub-block's values lie between those of codes 0 and top (values are monotone in
        // the code): a block all of whose sub-blocks lie within the extremes seen changes nothing,
        // and its codes are not read.
        const __m512 none = _mm512_sub_ps(_mm512_mul_ps(step, _mm512_setzero_ps()), shift);
        const __m512 all = _mm512_sub_ps(_mm512_mul_ps(step, _mm512_set1_ps(static_cast<float>(top_code))), shift);
        const __m512 lower = _mm512_min_ps(none, all), upper = _mm512_max_ps(none, all);
        __mmask16 read = 0;
        for (int i = 0; i < 2; ++i) {
            const auto own = static_cast<__mmask16>(lanes & (0xFFu << (8 * i)));
            if (own != 0 && !extremes.covers(own, lower, upper)) read = static_cast<__mmask16>(read | own);
        }
        if (read == 0) continue;
        alignas(32) uint8_t folded[32] = {};
        const uint8_t* block[2] = {first, second};
        for (int i = 0; i < 2; ++i)
            for (int p = 0; p < 4 && ((read >> (8 * i)) & 0xFF) != 0; p += 2)
                _mm_storel_epi64(reinterpret_cast<__m128i*>(folded + 16 * i + 4 * p),
                                 _mm512_cvtepi64_epi8(fold_pairs(block[i] + nibbles + 32 * p, fifth ? block[i] + 16 : nullptr, p, top)));
        const __m512i ends = _mm512_cvtepu16_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(folded)));
        const __m512i least = _mm512_and_si512(ends, _mm512_set1_epi32(0xFF));
        const __m512i greatest = _mm512_sub_epi32(_mm512_set1_epi32(top_code), _mm512_srli_epi32(ends, 8));
        const __m512 x = _mm512_sub_ps(_mm512_mul_ps(step, _mm512_cvtepi32_ps(least)), shift);
        const __m512 z = _mm512_sub_ps(_mm512_mul_ps(step, _mm512_cvtepi32_ps(greatest)), shift);
        extremes.add(read, x, z);
    }
    return extremes.bounds();
}

}  // namespace

bool k_quant_range_available() {
    static const bool supported = extremes_target_supported() && __builtin_cpu_supports("avx512vbmi");
    return supported;
}

std::optional<ValueBounds> k_quant_range(const uint8_t* bytes, uint64_t blocks, bool fifth) { return range_avx512(bytes, blocks, fifth); }

#else

bool k_quant_range_available() { return false; }

std::optional<ValueBounds> k_quant_range(const uint8_t*, uint64_t, bool) { return std::nullopt; }

#endif

}  // namespace mlens
