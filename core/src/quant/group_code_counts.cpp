#include "group_code_counts.h"

#include <cstring>
#include <vector>

#include "util/thread_scratch.h"

#include "util/avx512_intrinsics.h"

namespace mlens {

namespace {

// How often each code occurs in each group: count[g * codes + c].
void count_codes_plainly(const uint8_t* code, uint64_t groups, uint32_t length, uint32_t codes, uint8_t* count) {
    std::memset(count, 0, groups * codes);
    for (uint64_t g = 0; g < groups; ++g)
        for (uint32_t i = 0; i < length; ++i) ++count[g * codes + code[g * length + i]];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with one vector compare per code and 32 codes of a group: each code's count is the
// number of bits set in a compare's mask.
template <uint32_t kCodes>
__attribute__((target("avx2,popcnt"))) void count_codes_avx2(const uint8_t* code, uint64_t groups, uint32_t length, uint8_t* count) {
    for (uint64_t g = 0; g < groups; ++g) {
        uint32_t n[kCodes] = {};
        for (uint32_t at = 0; at < length; at += 32) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(code + g * length + at));
            for (uint32_t c = 0; c < kCodes; ++c) {
                const __m256i same = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(static_cast<char>(c)));
                n[c] += static_cast<uint32_t>(__builtin_popcount(static_cast<uint32_t>(_mm256_movemask_epi8(same))));
            }
        }
        for (uint32_t c = 0; c < kCodes; ++c) count[g * kCodes + c] = static_cast<uint8_t>(n[c]);
    }
}

// With AVX-512, two 32-code groups per compare: the low and high halves of its 64-bit mask.
__attribute__((target("avx512bw,popcnt"))) void count_pairs_avx512(const uint8_t* code, uint64_t groups, uint8_t* count) {
    for (uint64_t g = 0; g + 2 <= groups; g += 2) {
        const __m512i v = _mm512_loadu_si512(code + g * 32);
        for (uint32_t c = 0; c < 16; ++c) {
            const uint64_t same = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(c)));
            count[g * 16 + c] = static_cast<uint8_t>(__builtin_popcount(static_cast<uint32_t>(same)));
            count[(g + 1) * 16 + c] = static_cast<uint8_t>(__builtin_popcount(static_cast<uint32_t>(same >> 32)));
        }
    }
}

// With GFNI and AVX-512 BITALG, no compare per code: each code of 32-code pieces, two per
// vector, becomes one set bit of a byte (codes 8j to 8j + 7 in vector j: a byte lookup of the
// code's low four bits, kept where its fifth bit is j / 2); an 8x8 bit transpose of each 8 bytes
// (gf2p8affine with the unit vectors as its input) gathers the bits of each code into one byte,
// whose popcount counts the code among those 8; a piece's counts are the sum of its four 8-byte
// quarters. Writes kCodes (16 or 32) counts per piece.
#define MLENS_GFNI_TARGET __attribute__((target("avx512f,avx512bw,avx512bitalg,gfni")))

// Of 64 codes (two pieces) as one set bit of a byte each (`bit` maps a code to its bit, `keep`
// the codes that have one here), how often each bit is set in each piece: the piece's 8 counts
// in every 64-bit lane of its half.
MLENS_GFNI_TARGET inline __m512i count_bits(__m512i codes, __mmask64 keep, __m512i bit, __m512i units) {
    const __m512i onehot = _mm512_maskz_shuffle_epi8(keep, bit, codes);
    const __m512i quarter = _mm512_popcnt_epi8(_mm512_gf2p8affine_epi64_epi8(units, onehot, 0));
    const __m512i half = _mm512_add_epi8(quarter, _mm512_shuffle_epi32(quarter, static_cast<_MM_PERM_ENUM>(0x4E)));
    return _mm512_add_epi8(half, _mm512_shuffle_i64x2(half, half, 0xB1));
}

template <uint32_t kCodes>
MLENS_GFNI_TARGET void count_pieces_gfni(const uint8_t* code, uint64_t pieces, uint8_t* count) {
    const __m512i low_bit = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0));
    const __m512i high_bit = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, -128));
    const __m512i units = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));
    const __m512i fifth = _mm512_set1_epi8(16);
    for (uint64_t p = 0; p < pieces; p += 2) {
        const bool pair = p + 1 < pieces;
        const __m512i v = _mm512_maskz_loadu_epi8(pair ? ~0ull : 0xFFFFFFFFull, code + p * 32);
        const __mmask64 upper = kCodes == 32 ? _mm512_test_epi8_mask(v, fifth) : 0;
        for (uint32_t part = 0; part < kCodes / 16; ++part) {
            const __mmask64 keep = part == 0 ? ~upper : upper;
            const __m512i both = _mm512_unpacklo_epi64(count_bits(v, keep, low_bit, units), count_bits(v, keep, high_bit, units));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(count + p * kCodes + 16 * part), _mm512_castsi512_si128(both));
            if (pair)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(count + (p + 1) * kCodes + 16 * part), _mm512_extracti32x4_epi32(both, 2));
        }
    }
}
#undef MLENS_GFNI_TARGET

// Each group's counts as the sum of its 32-value pieces' counts (`per_group` pieces a group).
void add_pieces(const uint8_t* piece, uint64_t groups, uint32_t per_group, uint32_t codes, uint8_t* count) {
    for (uint64_t g = 0; g < groups; ++g)
        for (uint32_t c = 0; c < codes; ++c) {
            uint32_t n = 0;
            for (uint32_t p = 0; p < per_group; ++p) n += piece[(g * per_group + p) * codes + c];
            count[g * codes + c] = static_cast<uint8_t>(n);
        }
}
#endif

}  // namespace

void count_group_codes(const CodeGroups& shape, const uint8_t* code, uint64_t groups, uint8_t* count) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    static const bool avx512 = avx2 && __builtin_cpu_supports("avx512bw");
    static const bool gfni = avx512 && __builtin_cpu_supports("avx512bitalg") && __builtin_cpu_supports("gfni");
    if (gfni && shape.length % 32 == 0 && (shape.codes == 16 || shape.codes == 32)) {
        const auto count_pieces = shape.codes == 16 ? count_pieces_gfni<16> : count_pieces_gfni<32>;
        if (shape.length == 32) return count_pieces(code, groups, count);
        std::vector<uint8_t>& piece = thread_scratch<std::vector<uint8_t>>([] {});
        piece.resize(groups * shape.length / 32 * shape.codes);
        count_pieces(code, groups * shape.length / 32, piece.data());
        return add_pieces(piece.data(), groups, shape.length / 32, shape.codes, count);
    }
    if (avx512 && shape.length == 32 && shape.codes == 16) {
        count_pairs_avx512(code, groups, count);
        if (groups % 2 != 0) count_codes_avx2<16>(code + (groups - 1) * 32, 1, 32, count + (groups - 1) * 16);
        return;
    }
    if (avx2 && shape.length % 32 == 0 && shape.codes == 16) {
        count_codes_avx2<16>(code, groups, shape.length, count);
        return;
    }
    if (avx2 && shape.length % 32 == 0 && shape.codes == 32) {
        count_codes_avx2<32>(code, groups, shape.length, count);
        return;
    }
#endif
    count_codes_plainly(code, groups, shape.length, shape.codes, count);
}

}  // namespace mlens
