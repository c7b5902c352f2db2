#include "block_codes.h"

#include <cstring>

#include "block_fields_avx512.h"

#include "block_fields.h"
#include "k_quant_scales.h"
#include "mlens/formats/ggml_type_table.h"
#include "util/cpu_features.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

constexpr uint32_t kGroup = 32;

BlockCodesKind codes_kind(uint32_t ggml_type) {
    const GgmlTypeRow* row = ggml_type_row(ggml_type);
    return row ? row->codes : BlockCodesKind::none;
}

// The 32 codes of 16 bytes of nibble pairs: low nibbles, then high nibbles.
[[gnu::always_inline]] inline void nibble_codes(const uint8_t* q, uint8_t* out) {
    for (int j = 0; j < 16; ++j) {
        out[j] = q[j] & 15;
        out[j + 16] = q[j] >> 4;
    }
}

// How a 32-value block decodes code c with its d (and m): Q4_0 (c - 8) * d, Q4_1 c * d + m,
// IQ4_NL d * table[c], Q5_0 (c - 16) * d, Q5_1 c * d + m.
enum class SmallDecode { biased, offset, iq4 };

#if defined(__x86_64__) && defined(__GNUC__)
#define MLENS_CODES_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

// The 16 nibble bytes at `q` as 32 codes in value order: the low nibbles, then the high.
MLENS_CODES_TARGET inline __m256i split_nibbles(const uint8_t* q) {
    const __m128i nibble = _mm_set1_epi8(15);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(v, nibble)), _mm_and_si128(_mm_srli_epi16(v, 4), nibble), 1);
}

// small_blocks and q5_blocks with AVX-512, one block per step: the 16 nibble bytes at kCodesAt
// split into 32 codes in one 256-bit vector (with kFifthAt >= 0, the 32-bit field there adds bit 4
// to code j where its bit j is set), and the block's kCodes code values computed 16 at a time from
// the codes' factors (c - kBias, or table[c]) times d, plus m, in ggml's order.
template <uint32_t kBytes, uint32_t kCodesAt, int kFifthAt, SmallDecode kDecode, int kBias>
MLENS_CODES_TARGET void small_blocks_avx512(const uint8_t* bytes, uint64_t blocks, const float* d, const float* m, uint8_t* codes,
                                            float* values) {
    constexpr uint32_t kCodes = kFifthAt >= 0 ? 32 : 16;
    const __m256i bit4 = _mm256_set1_epi8(16);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 low_factor =
        kDecode == SmallDecode::iq4 ? iq4_table() : _mm512_cvtepi32_ps(_mm512_sub_epi32(iota, _mm512_set1_epi32(kBias)));
    const __m512 high_factor = _mm512_cvtepi32_ps(_mm512_sub_epi32(iota, _mm512_set1_epi32(kBias - 16)));
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        __m256i c = split_nibbles(block + kCodesAt);
        if constexpr (kFifthAt >= 0) {
            uint32_t high = 0;
            std::memcpy(&high, block + kFifthAt, 4);  // as ggml reads it
            c = _mm256_mask_add_epi8(c, high, c, bit4);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + b * kGroup), c);
        const __m512 step = _mm512_set1_ps(d[b]);
        __m512 low = _mm512_mul_ps(low_factor, step);
        if constexpr (kDecode == SmallDecode::offset) low = _mm512_add_ps(low, _mm512_set1_ps(m[b]));
        _mm512_storeu_ps(values + b * kCodes, low);
        if constexpr (kCodes == 32) {
            __m512 high = _mm512_mul_ps(high_factor, step);
            if constexpr (kDecode == SmallDecode::offset) high = _mm512_add_ps(high, _mm512_set1_ps(m[b]));
            _mm512_storeu_ps(values + b * kCodes + 16, high);
        }
    }
}
#endif

// The 32-value types: `kBytes` bytes of d (and m at 2 for Q4_1), then 16 bytes of nibbles.
template <uint32_t kBytes, SmallDecode kDecode>
MLENS_VECTOR_LOOP void small_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    constexpr uint32_t kCodesAt = kDecode == SmallDecode::offset ? 4 : 2;
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* m = kDecode == SmallDecode::offset ? half_field(bytes, blocks, kBytes, 2, 1) : nullptr;
#if defined(__x86_64__) && defined(__GNUC__)
    constexpr int kBias = kDecode == SmallDecode::biased ? 8 : 0;
    if (avx512_paths_allowed()) return small_blocks_avx512<kBytes, kCodesAt, -1, kDecode, kBias>(bytes, blocks, d, m, codes, values);
#endif
    for (uint64_t b = 0; b < blocks; ++b) {
        nibble_codes(bytes + b * kBytes + kCodesAt, codes + b * kGroup);
        float* v = values + b * 16;
        const float db = d[b];
        if constexpr (kDecode == SmallDecode::iq4)
            for (int c = 0; c < 16; ++c) v[c] = db * static_cast<float>(kIq4Values[c]);
        else if constexpr (kDecode == SmallDecode::offset)
            for (int c = 0; c < 16; ++c) v[c] = static_cast<float>(c) * db + m[b];
        else
            for (int c = 0; c < 16; ++c) v[c] = static_cast<float>(c - 8) * db;
    }
}

// Q5_0 ((c - 16) * d) and Q5_1 (c * d + m): d (and m), 4 bytes of fifth bits (bit j for value
// j), 16 bytes of nibble pairs (values j and j + 16); 32 codes, one group per block.
template <bool kOffset>
MLENS_VECTOR_LOOP void q5_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    constexpr uint32_t kBytes = kOffset ? 24 : 22, kHigh = kOffset ? 4 : 2;
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* m = kOffset ? half_field(bytes, blocks, kBytes, 2, 1) : nullptr;
#if defined(__x86_64__) && defined(__GNUC__)
    constexpr SmallDecode kDecode = kOffset ? SmallDecode::offset : SmallDecode::biased;
    constexpr int kFifthAt = static_cast<int>(kHigh), kBias = kOffset ? 0 : 16;
    if (avx512_paths_allowed()) return small_blocks_avx512<kBytes, kHigh + 4, kFifthAt, kDecode, kBias>(bytes, blocks, d, m, codes, values);
#endif
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        uint32_t high = 0;
        std::memcpy(&high, block + kHigh, 4);  // as ggml reads it
        const uint8_t* q = block + kHigh + 4;
        uint8_t* c = codes + b * kGroup;
        for (int j = 0; j < 16; ++j) {
            c[j] = static_cast<uint8_t>((q[j] & 15) | (((high >> j) << 4) & 16));
            c[j + 16] = static_cast<uint8_t>((q[j] >> 4) | ((high >> (j + 12)) & 16));
        }
        float* v = values + b * 32;
        const float db = d[b];
        if constexpr (kOffset)
            for (int k = 0; k < 32; ++k) v[k] = static_cast<float>(k) * db + m[b];
        else
            for (int k = 0; k < 32; ++k) v[k] = static_cast<float>(k - 16) * db;
    }
}

// Q4_K and Q5_K (kFifth): d, dmin, 12 bytes of 6-bit scales and mins, (Q5_K: 32 bytes of fifth
// bits,) 128 bytes of nibbles; each 32 nibble bytes hold sub-blocks 2p (low nibbles; Q5_K's
// fifth bit is bit 2p of qh[l]) and 2p + 1 (high nibbles, bit 2p + 1), decoded
// (d * sc) * q - (dmin * m); 16 or 32 codes per group.
#if defined(__x86_64__) && defined(__GNUC__)
// k_quant_blocks with AVX-512, one 32-byte run of nibbles (two sub-blocks) per step: its low and
// high nibbles as two sub-blocks' 32 codes (Q5_K: bit 4 added under a mask of the fifth-bit
// bytes' bit 2p or 2p + 1), each sub-block's code values step * c - shift 16 at a time.
template <bool kFifth>
MLENS_CODES_TARGET void k_quant_blocks_avx512(const uint8_t* bytes, uint64_t blocks, const float* d, const float* dmin, uint8_t* codes,
                                              float* values, float* steps, float* offsets) {
    constexpr uint32_t kBytes = kFifth ? 176 : 144, kNibbles = kFifth ? 48 : 16, kCodes = kFifth ? 32 : 16;
    const __m256i nibble = _mm256_set1_epi8(15), bit4 = _mm256_set1_epi8(16);
    const __m512 low_codes = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 high_codes = _mm512_add_ps(low_codes, _mm512_set1_ps(16));
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 16));
        for (int pair = 0; pair < 4; ++pair) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + kNibbles + 32 * pair));
            __m256i low = _mm256_and_si256(q, nibble), up = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
            if constexpr (kFifth) {
                low =
                    _mm256_mask_add_epi8(low, _mm256_test_epi8_mask(high, _mm256_set1_epi8(static_cast<char>(1 << (2 * pair)))), low, bit4);
                up = _mm256_mask_add_epi8(up, _mm256_test_epi8_mask(high, _mm256_set1_epi8(static_cast<char>(2 << (2 * pair)))), up, bit4);
            }
            uint8_t* out = codes + (8 * b + 2 * pair) * kGroup;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), low);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kGroup), up);
            for (int half = 0; half < 2; ++half) {
                int sc = 0, m = 0;
                k_quant_scale_min(block + 4, 2 * pair + half, sc, m);
                if (steps) {
                    steps[8 * b + 2 * pair + half] = d[b] * static_cast<float>(sc);
                    offsets[8 * b + 2 * pair + half] = -(dmin[b] * static_cast<float>(m));
                    continue;
                }
                const __m512 step = _mm512_set1_ps(d[b] * static_cast<float>(sc)), shift = _mm512_set1_ps(dmin[b] * static_cast<float>(m));
                float* v = values + (8 * b + 2 * pair + half) * kCodes;
                _mm512_storeu_ps(v, _mm512_sub_ps(_mm512_mul_ps(step, low_codes), shift));
                if constexpr (kFifth) _mm512_storeu_ps(v + 16, _mm512_sub_ps(_mm512_mul_ps(step, high_codes), shift));
            }
        }
    }
}
#endif

// With `steps` (and `offsets`), each sub-block's step d * sc and offset -(dmin * m) instead of
// its code values (offset groups, block_steps.h).
template <bool kFifth>
MLENS_VECTOR_LOOP void k_quant_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values, float* steps = nullptr,
                                      float* offsets = nullptr) {
    constexpr uint32_t kBytes = kFifth ? 176 : 144, kNibbles = kFifth ? 48 : 16, kCodes = kFifth ? 32 : 16;
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* dmin = half_field(bytes, blocks, kBytes, 2, 1);
#if defined(__x86_64__) && defined(__GNUC__)
    if (avx512_paths_allowed()) return k_quant_blocks_avx512<kFifth>(bytes, blocks, d, dmin, codes, values, steps, offsets);
#endif
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        const uint8_t* high = block + 16;
        for (int pair = 0; pair < 4; ++pair) {
            const uint8_t* q = block + kNibbles + 32 * pair;
            uint8_t* low = codes + (8 * b + 2 * pair) * kGroup;
            uint8_t* up = low + kGroup;
            for (int l = 0; l < 32; ++l) {
                low[l] = q[l] & 15;
                up[l] = q[l] >> 4;
                if constexpr (kFifth) {
                    low[l] = static_cast<uint8_t>(low[l] | (((high[l] >> (2 * pair)) & 1) << 4));
                    up[l] = static_cast<uint8_t>(up[l] | (((high[l] >> (2 * pair + 1)) & 1) << 4));
                }
            }
            for (int half = 0; half < 2; ++half) {
                int sc = 0, m = 0;
                k_quant_scale_min(block + 4, 2 * pair + half, sc, m);
                const float step = d[b] * static_cast<float>(sc), shift = dmin[b] * static_cast<float>(m);
                if (steps) {
                    steps[8 * b + 2 * pair + half] = step;
                    offsets[8 * b + 2 * pair + half] = -shift;
                    continue;
                }
                float* v = values + (8 * b + 2 * pair + half) * kCodes;
                for (uint32_t c = 0; c < kCodes; ++c) v[c] = step * static_cast<float>(c) - shift;
            }
        }
    }
}

// IQ4_XS: d, 16-bit high scale bits, 4 bytes of low scale bits, 128 bytes of codes; sub-block i
// (16 bytes of nibble pairs) decodes (d * (ls - 32)) * table[q].
#if defined(__x86_64__) && defined(__GNUC__)
// The same with AVX-512, a sub-block per step: its codes split as small_blocks_avx512 splits a
// block's, its 16 code values the table times its step.
MLENS_CODES_TARGET void iq4_xs_blocks_avx512(const uint8_t* bytes, uint64_t blocks, const float* d, uint8_t* codes, float* values) {
    const __m512 table = iq4_table();
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        for (int i = 0; i < 8; ++i) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + (8 * b + i) * kGroup), split_nibbles(block + 8 + 16 * i));
            const float dl = d[b] * static_cast<float>(iq4_xs_scale(block, i) - 32);
            _mm512_storeu_ps(values + (8 * b + i) * 16, _mm512_mul_ps(table, _mm512_set1_ps(dl)));
        }
    }
}
#endif

MLENS_VECTOR_LOOP void iq4_xs_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    const float* d = half_field(bytes, blocks, 136, 0);
#if defined(__x86_64__) && defined(__GNUC__)
    if (avx512_paths_allowed()) return iq4_xs_blocks_avx512(bytes, blocks, d, codes, values);
#endif
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        for (int i = 0; i < 8; ++i) {
            nibble_codes(block + 8 + 16 * i, codes + (8 * b + i) * kGroup);
            const float dl = d[b] * static_cast<float>(iq4_xs_scale(block, i) - 32);
            float* v = values + (8 * b + i) * 16;
            for (int c = 0; c < 16; ++c) v[c] = dl * static_cast<float>(kIq4Values[c]);
        }
    }
}

}  // namespace

CodeGroups block_code_groups(uint32_t ggml_type) {
    const BlockCodesKind kind = codes_kind(ggml_type);
    switch (kind) {
        case BlockCodesKind::q4_0:
        case BlockCodesKind::q4_1:
        case BlockCodesKind::iq4_nl:
        case BlockCodesKind::q4_k:
        case BlockCodesKind::iq4_xs:
            return {16, kGroup};
        case BlockCodesKind::q5_0:
        case BlockCodesKind::q5_1:
        case BlockCodesKind::q5_k:
            return {32, kGroup};
        case BlockCodesKind::none:
            break;
    }
    return {};
}

OffsetGroups block_offset_groups(uint32_t ggml_type) { return codes_kind(ggml_type) == BlockCodesKind::q5_k ? OffsetGroups{kGroup, 32} : OffsetGroups{}; }

void read_block_offset_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* steps, float* offsets) {
    if (codes_kind(ggml_type) == BlockCodesKind::q5_k) k_quant_blocks<true>(bytes, blocks, codes, nullptr, steps, offsets);
}

void read_block_code_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    const BlockCodesKind kind = codes_kind(ggml_type);
    switch (kind) {
        case BlockCodesKind::q4_0:
            return small_blocks<18, SmallDecode::biased>(bytes, blocks, codes, values);
        case BlockCodesKind::iq4_nl:
            return small_blocks<18, SmallDecode::iq4>(bytes, blocks, codes, values);
        case BlockCodesKind::q4_1:
            return small_blocks<20, SmallDecode::offset>(bytes, blocks, codes, values);
        case BlockCodesKind::q4_k:
            return k_quant_blocks<false>(bytes, blocks, codes, values);
        case BlockCodesKind::iq4_xs:
            return iq4_xs_blocks(bytes, blocks, codes, values);
        case BlockCodesKind::q5_0:
            return q5_blocks<false>(bytes, blocks, codes, values);
        case BlockCodesKind::q5_1:
            return q5_blocks<true>(bytes, blocks, codes, values);
        case BlockCodesKind::q5_k:
            return k_quant_blocks<true>(bytes, blocks, codes, values);
        case BlockCodesKind::none:
            break;
    }
}

}  // namespace mlens
