#include "block_codes.h"

#include <cstring>

#include "block_fields.h"
#include "k_quant_scales.h"
#include "mlens/formats/ggml_type_table.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

constexpr uint32_t kGroup = 32;

BlockCodesKind codes_kind(uint32_t ggml_type) {
    const GgmlTypeRow* row = ggml_type_row(ggml_type);
    return row ? row->codes : BlockCodesKind::none;
}

// The 32 codes of 16 bytes of nibble pairs (low nibbles first), each with its fifth bit from
// the 32 bits at `high` (bit j for code j) when kFive.
template <bool kFive>
[[gnu::always_inline]] inline void nibble_codes(const uint8_t* q, const uint8_t* high, uint8_t* out) {
    uint32_t h = 0;
    if constexpr (kFive) std::memcpy(&h, high, 4);
    for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<uint8_t>((q[j] & 15) | ((h >> j) & 1) << 4);
        out[j + 16] = static_cast<uint8_t>((q[j] >> 4) | ((h >> (j + 16)) & 1) << 4);
    }
}

// How a 32-value block decodes code c with its d (and m): Q4_0 and Q5_0 (c - bias) * d, stored
// with a bias of 8 and 16; Q4_1 and Q5_1 c * d + m; IQ4_NL d * table[c].
enum class SmallDecode { biased, offset, iq4 };

// The 32-value types: `kBytes` bytes of d (and m at 2 for offset types), the fifth bits at
// kHighAt (5-bit types) and 16 bytes of nibbles at kCodesAt.
template <uint32_t kBytes, uint32_t kCodesAt, uint32_t kHighAt, SmallDecode kDecode>
MLENS_VECTOR_LOOP void small_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    constexpr bool kFive = kHighAt != 0;
    constexpr uint32_t kCodes = kFive ? 32 : 16;
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* m = kDecode == SmallDecode::offset ? half_field(bytes, blocks, kBytes, 2, 1) : nullptr;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        nibble_codes<kFive>(block + kCodesAt, block + kHighAt, codes + b * kGroup);
        float* v = values + b * kCodes;
        const float db = d[b];
        if constexpr (kDecode == SmallDecode::iq4)
            for (uint32_t c = 0; c < 16; ++c) v[c] = db * static_cast<float>(kIq4Values[c]);
        else if constexpr (kDecode == SmallDecode::offset)
            for (uint32_t c = 0; c < kCodes; ++c) v[c] = static_cast<float>(c) * db + m[b];
        else
            for (uint32_t c = 0; c < kCodes; ++c) v[c] = static_cast<float>(static_cast<int>(c) - static_cast<int>(kCodes / 2)) * db;
    }
}

// Q4_K and Q5_K: d, dmin, 12 bytes of 6-bit scales and mins, (Q5_K) 32 bytes of fifth bits, 128
// bytes of codes; each 32 bytes hold two sub-blocks (low nibbles, then high), decoded
// (d * sc) * q - (dmin * m).
template <bool kFive>
MLENS_VECTOR_LOOP void k_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    constexpr uint32_t block_bytes = kFive ? 176 : 144, codes_at = kFive ? 48 : 16, n = kFive ? 32 : 16;
    const float* d = half_field(bytes, blocks, block_bytes, 0, 0);
    const float* dmin = half_field(bytes, blocks, block_bytes, 2, 1);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * block_bytes;
        for (int pair = 0; pair < 4; ++pair) {
            const uint8_t* q = block + codes_at + 32 * pair;
            uint8_t* low = codes + (8 * b + 2 * pair) * kGroup;
            uint8_t* high = low + kGroup;
            for (int l = 0; l < 32; ++l) {
                const int h = kFive ? block[16 + l] >> (2 * pair) : 0;
                low[l] = static_cast<uint8_t>((q[l] & 15) | (h & 1) << 4);
                high[l] = static_cast<uint8_t>((q[l] >> 4) | (h & 2) << 3);
            }
            for (int half = 0; half < 2; ++half) {
                int sc = 0, m = 0;
                k_quant_scale_min(block + 4, 2 * pair + half, sc, m);
                const float step = d[b] * static_cast<float>(sc), shift = dmin[b] * static_cast<float>(m);
                float* v = values + (8 * b + 2 * pair + half) * n;
                for (uint32_t c = 0; c < n; ++c) v[c] = step * static_cast<float>(c) - shift;
            }
        }
    }
}

// IQ4_XS: d, 16-bit high scale bits, 4 bytes of low scale bits, 128 bytes of codes; sub-block i
// (16 bytes of nibble pairs) decodes (d * (ls - 32)) * table[q].
MLENS_VECTOR_LOOP void iq4_xs_blocks(const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    const float* d = half_field(bytes, blocks, 136, 0);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        const auto high = static_cast<uint16_t>(block[2] | block[3] << 8);
        for (int i = 0; i < 8; ++i) {
            const int ls = ((block[4 + i / 2] >> 4 * (i % 2)) & 0xF) | (((high >> 2 * i) & 3) << 4);
            nibble_codes<false>(block + 8 + 16 * i, nullptr, codes + (8 * b + i) * kGroup);
            const float dl = d[b] * static_cast<float>(ls - 32);
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

void read_block_code_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, uint8_t* codes, float* values) {
    const BlockCodesKind kind = codes_kind(ggml_type);
    switch (kind) {
        case BlockCodesKind::q4_0:
            return small_blocks<18, 2, 0, SmallDecode::biased>(bytes, blocks, codes, values);
        case BlockCodesKind::iq4_nl:
            return small_blocks<18, 2, 0, SmallDecode::iq4>(bytes, blocks, codes, values);
        case BlockCodesKind::q4_1:
            return small_blocks<20, 4, 0, SmallDecode::offset>(bytes, blocks, codes, values);
        case BlockCodesKind::q5_0:
            return small_blocks<22, 6, 2, SmallDecode::biased>(bytes, blocks, codes, values);
        case BlockCodesKind::q5_1:
            return small_blocks<24, 8, 4, SmallDecode::offset>(bytes, blocks, codes, values);
        case BlockCodesKind::q4_k:
            return k_blocks<false>(bytes, blocks, codes, values);
        case BlockCodesKind::q5_k:
            return k_blocks<true>(bytes, blocks, codes, values);
        case BlockCodesKind::iq4_xs:
            return iq4_xs_blocks(bytes, blocks, codes, values);
        case BlockCodesKind::none:
            break;
    }
}

}  // namespace mlens
