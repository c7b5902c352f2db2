#include "block_range.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "block_fields.h"
#include "iq4_xs_range.h"
#include "k_quant_range.h"
#include "k_quant_scales.h"
#include "mlens/formats/ggml_type_table.h"
#include "q6_k_range.h"
#include "q8_0_range.h"
#include "small_block_range.h"
#include "util/finite_floats.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Least and greatest code among the low nibbles and among the high nibbles of kBytes bytes;
// inlined, so that it is vectorized for the CPU variant of the reader that calls it.
struct NibbleExtremes {
    uint8_t low_min = 15, low_max = 0, high_min = 15, high_max = 0;
};
template <int kBytes>
[[gnu::always_inline]] inline NibbleExtremes nibble_extremes(const uint8_t* p) {
    NibbleExtremes e;
    for (int i = 0; i < kBytes; ++i) {
        const uint8_t low = p[i] & 15, high = p[i] >> 4;
        e.low_min = std::min(e.low_min, low);
        e.low_max = std::max(e.low_max, low);
        e.high_min = std::min(e.high_min, high);
        e.high_max = std::max(e.high_max, high);
    }
    return e;
}

// The same over 32 bytes of Q5_K nibbles with their fifth bits: bit 2p (low nibbles) and 2p + 1
// (high nibbles) of each of 32 bytes at `high`.
[[gnu::always_inline]] inline NibbleExtremes fifth_bit_extremes(const uint8_t* p, const uint8_t* high, int pair) {
    NibbleExtremes e{31, 0, 31, 0};
    for (int i = 0; i < 32; ++i) {
        const auto low = static_cast<uint8_t>((p[i] & 15) | (((high[i] >> (2 * pair)) & 1) << 4));
        const auto up = static_cast<uint8_t>((p[i] >> 4) | (((high[i] >> (2 * pair + 1)) & 1) << 4));
        e.low_min = std::min(e.low_min, low);
        e.low_max = std::max(e.low_max, low);
        e.high_min = std::min(e.high_min, up);
        e.high_max = std::max(e.high_max, up);
    }
    return e;
}

// Every group of a run of blocks, as the numbers its two end values come from: a group decodes
// code value c to (d * scale) * c - dmin * min, which is ggml's arithmetic for each type here
// (types without a min have dmin = min = 0, and x - 0 is x; without a sub-block scale, scale = 1
// and d * 1 is d). least/greatest are the code values of the group's least and greatest code.
// Per-thread arrays, every entry set by each type's reader, then folded by group_range in one
// vector loop.
struct Groups {
    std::vector<float> d, dmin;
    std::vector<int8_t> scale, min, least, greatest;

    static Groups& for_thread(uint64_t count) {
        Groups& g = thread_scratch<Groups>([] {});
        for (auto* v : {&g.d, &g.dmin}) v->resize(count);
        for (auto* v : {&g.scale, &g.min, &g.least, &g.greatest}) v->resize(count);
        return g;
    }
    void set(uint64_t i, float d_, int scale_, float dmin_, int min_, int least_, int greatest_) {
        d[i] = d_;
        scale[i] = static_cast<int8_t>(scale_);
        dmin[i] = dmin_;
        min[i] = static_cast<int8_t>(min_);
        least[i] = static_cast<int8_t>(least_);
        greatest[i] = static_cast<int8_t>(greatest_);
    }
};

// The least and greatest end over `count` groups; nullopt when an end is NaN or infinite, or
// there are no groups. Both ends of a group are compared with both bounds: a negative scale
// turns the least code into the greatest value.
MLENS_VECTOR_LOOP std::optional<ValueBounds> group_range(const Groups& g, uint64_t count) {
    const float* d = g.d.data();
    const float* dmin = g.dmin.data();
    const int8_t* scale = g.scale.data();
    const int8_t* min = g.min.data();
    const int8_t* least = g.least.data();
    const int8_t* greatest = g.greatest.data();
    float lo = INFINITY, hi = -INFINITY;
    uint32_t bad = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(| : bad)
    for (uint64_t i = 0; i < count; ++i) {
        const float step = d[i] * static_cast<float>(scale[i]), shift = dmin[i] * static_cast<float>(min[i]);
        const float a = step * static_cast<float>(least[i]) - shift;
        const float b = step * static_cast<float>(greatest[i]) - shift;
        bad |= static_cast<uint32_t>(!finite_bits(a)) | static_cast<uint32_t>(!finite_bits(b));
        lo = std::min(lo, std::min(a, b));
        hi = std::max(hi, std::max(a, b));
    }
    if (bad != 0 || count == 0) return std::nullopt;
    return ValueBounds{lo, hi};
}

// Q4_0: (q - 8) * d; IQ4_NL: d * table[q]. 18-byte blocks: d, then 16 bytes of two nibbles that
// share d (one group of 32).
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_18_byte(const uint8_t* bytes, uint64_t blocks, bool iq4) {
    if (small_block_range_available())
        return small_block_range(bytes, blocks, {.block_bytes = 18, .codes_at = 2, .iq4 = iq4, .bias = iq4 ? 0 : 8});
    const float* d = half_field(bytes, blocks, 18, 0);
    Groups& g = Groups::for_thread(blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const NibbleExtremes e = nibble_extremes<16>(bytes + b * 18 + 2);
        const int least = std::min(e.low_min, e.high_min), greatest = std::max(e.low_max, e.high_max);
        if (iq4)
            g.set(b, d[b], 1, 0.0f, 0, kIq4Values[least], kIq4Values[greatest]);
        else
            g.set(b, d[b], 1, 0.0f, 0, least - 8, greatest - 8);
    }
    return group_range(g, blocks);
}

// Q4_1: q * d + m, 20-byte blocks of d, m and 16 bytes of two nibbles (one group of 32). The
// offset is a min of -1 times m: x - (m * -1) is x + m, rounded once.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q4_1(const uint8_t* bytes, uint64_t blocks) {
    if (small_block_range_available()) return small_block_range(bytes, blocks, {.block_bytes = 20, .codes_at = 4, .offset = true});
    const float* d = half_field(bytes, blocks, 20, 0, 0);
    const float* m = half_field(bytes, blocks, 20, 2, 1);
    Groups& g = Groups::for_thread(blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const NibbleExtremes e = nibble_extremes<16>(bytes + b * 20 + 4);
        g.set(b, d[b], 1, m[b], -1, std::min(e.low_min, e.high_min), std::max(e.low_max, e.high_max));
    }
    return group_range(g, blocks);
}

// Q5_0: (q - 16) * d; Q5_1: q * d + m. Blocks of d (and m), 4 bytes of fifth bits (qh, one per
// value: bit j for value j), 16 bytes of two nibbles (values j and j + 16).
template <bool kOffset>
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q5(const uint8_t* bytes, uint64_t blocks) {
    constexpr uint32_t kBytes = kOffset ? 24 : 22, kHigh = kOffset ? 4 : 2;
    if (small_block_range_available())
        return small_block_range(
            bytes, blocks,
            {.block_bytes = kBytes, .codes_at = kHigh + 4, .fifth = true, .fifth_at = kHigh, .offset = kOffset, .bias = kOffset ? 0 : 16});
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* m = kOffset ? half_field(bytes, blocks, kBytes, 2, 1) : nullptr;
    Groups& g = Groups::for_thread(blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        uint32_t high = 0;
        std::memcpy(&high, block + kHigh, 4);  // as ggml reads it
        const uint8_t* q = block + kHigh + 4;
        uint8_t least = 31, greatest = 0;
        for (int j = 0; j < 16; ++j) {
            const auto low = static_cast<uint8_t>((q[j] & 15) | (((high >> j) << 4) & 16));
            const auto up = static_cast<uint8_t>((q[j] >> 4) | ((high >> (j + 12)) & 16));
            least = std::min(least, std::min(low, up));
            greatest = std::max(greatest, std::max(low, up));
        }
        if constexpr (kOffset)
            g.set(b, d[b], 1, m[b], -1, least, greatest);
        else
            g.set(b, d[b], 1, 0.0f, 0, least - 16, greatest - 16);
    }
    return group_range(g, blocks);
}

// Q8_0: q * d, 34-byte blocks of d and 32 signed bytes.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q8_0(const uint8_t* bytes, uint64_t blocks) {
    if (q8_0_range_available()) return q8_0_range(bytes, blocks);
    const float* d = half_field(bytes, blocks, 34, 0);
    Groups& g = Groups::for_thread(blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* q = bytes + b * 34 + 2;
        // Signed bytes compared as unsigned after flipping the sign bit.
        uint8_t least = 255, greatest = 0;
        for (int i = 0; i < 32; ++i) {
            const auto u = static_cast<uint8_t>(q[i] ^ 0x80);
            least = std::min(least, u);
            greatest = std::max(greatest, u);
        }
        g.set(b, d[b], 1, 0.0f, 0, static_cast<int8_t>(least ^ 0x80), static_cast<int8_t>(greatest ^ 0x80));
    }
    return group_range(g, blocks);
}

// Q4_K and Q5_K (kFifth): 144- or 176-byte blocks of d, dmin, 12 bytes of 6-bit scales and mins,
// (Q5_K: 32 bytes of fifth bits,) 128 bytes of nibbles; each 32 nibble bytes hold two 32-value
// sub-blocks 2p (low nibbles; Q5_K's fifth bit is bit 2p of qh[l]) and 2p + 1 (high nibbles,
// bit 2p + 1), decoded d*sc*q - dmin*m.
template <bool kFifth>
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_k_quant(const uint8_t* bytes, uint64_t blocks) {
    constexpr uint32_t kBytes = kFifth ? 176 : 144, kNibbles = kFifth ? 48 : 16;
    if (k_quant_range_available()) return k_quant_range(bytes, blocks, kFifth);
    const float* d = half_field(bytes, blocks, kBytes, 0, 0);
    const float* dmin = half_field(bytes, blocks, kBytes, 2, 1);
    Groups& g = Groups::for_thread(8 * blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * kBytes;
        for (int pair = 0; pair < 4; ++pair) {
            NibbleExtremes e;
            if constexpr (kFifth)
                e = fifth_bit_extremes(block + kNibbles + 32 * pair, block + 16, pair);
            else
                e = nibble_extremes<32>(block + kNibbles + 32 * pair);
            int sc = 0, m = 0;
            k_quant_scale_min(block + 4, 2 * pair, sc, m);
            g.set(8 * b + 2 * pair, d[b], sc, dmin[b], m, e.low_min, e.low_max);
            k_quant_scale_min(block + 4, 2 * pair + 1, sc, m);
            g.set(8 * b + 2 * pair + 1, d[b], sc, dmin[b], m, e.high_min, e.high_max);
        }
    }
    return group_range(g, 8 * blocks);
}



// Q6_K: 210-byte blocks of 128 bytes of low nibbles, 64 bytes of two-bit pairs, 16 signed
// sub-block scales and d; 16 sub-blocks of 16 values, decoded d * sc * (q - 32). In each half
// (64 nibble bytes ql, 32 pair bytes qh, 8 scales), value l + 32k (l < 32, k < 4) takes the low
// (k < 2) or high nibble of ql[l + 32 (k % 2)] and bits 2k, 2k + 1 of qh[l], with scale l / 16 + 2k.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q6_k(const uint8_t* bytes, uint64_t blocks) {
    if (q6_k_range_available()) return q6_k_range(bytes, blocks);
    const float* d = half_field(bytes, blocks, 210, 208);
    Groups& g = Groups::for_thread(16 * blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 210;
        for (int half = 0; half < 2; ++half) {
            const uint8_t* ql = block + 64 * half;
            const uint8_t* qh = block + 128 + 32 * half;
            const auto* sc = reinterpret_cast<const int8_t*>(block + 192 + 8 * half);
            for (int k = 0; k < 4; ++k)
                for (int part = 0; part < 2; ++part) {
                    uint8_t least = 63, greatest = 0;
                    for (int l = 16 * part; l < 16 * part + 16; ++l) {
                        const uint8_t q = q6_k_code(ql, qh, l, k);
                        least = std::min(least, q);
                        greatest = std::max(greatest, q);
                    }
                    g.set(16 * b + 8 * half + 2 * k + part, d[b], sc[part + 2 * k], 0.0f, 0, least - 32, greatest - 32);
                }
        }
    }
    return group_range(g, 16 * blocks);
}

// IQ4_XS: 136-byte blocks of d, 16-bit high scale bits, 4 bytes of low scale bits, 128 bytes of
// codes; sub-block i (16 bytes, both nibbles) decodes d * (ls - 32) * table[q].
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_iq4_xs(const uint8_t* bytes, uint64_t blocks) {
    if (iq4_xs_range_available()) return iq4_xs_range(bytes, blocks);
    const float* d = half_field(bytes, blocks, 136, 0);
    Groups& g = Groups::for_thread(8 * blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        for (int i = 0; i < 8; ++i) {
            const int ls = iq4_xs_scale(block, i);
            const NibbleExtremes e = nibble_extremes<16>(block + 8 + 16 * i);
            const int least = std::min(e.low_min, e.high_min), greatest = std::max(e.low_max, e.high_max);
            g.set(8 * b + i, d[b], ls - 32, 0.0f, 0, kIq4Values[least], kIq4Values[greatest]);
        }
    }
    return group_range(g, 8 * blocks);
}

}  // namespace

bool has_block_value_range(uint32_t ggml_type) {
    const GgmlTypeRow* row = ggml_type_row(ggml_type);
    return row && row->range != BlockRangeKind::none;
}

std::optional<ValueBounds> block_value_range(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks) {
    const GgmlTypeRow* row = ggml_type_row(ggml_type);
    switch (row ? row->range : BlockRangeKind::none) {
        case BlockRangeKind::q4_0:
            return range_18_byte(bytes, blocks, false);
        case BlockRangeKind::iq4_nl:
            return range_18_byte(bytes, blocks, true);
        case BlockRangeKind::q4_1:
            return range_q4_1(bytes, blocks);
        case BlockRangeKind::q5_0:
            return range_q5<false>(bytes, blocks);
        case BlockRangeKind::q5_1:
            return range_q5<true>(bytes, blocks);
        case BlockRangeKind::q8_0:
            return range_q8_0(bytes, blocks);
        case BlockRangeKind::q5_k:
            return range_k_quant<true>(bytes, blocks);
        case BlockRangeKind::q6_k:
            return range_q6_k(bytes, blocks);
        case BlockRangeKind::q4_k:
            return range_k_quant<false>(bytes, blocks);
        case BlockRangeKind::iq4_xs:
            return range_iq4_xs(bytes, blocks);
        case BlockRangeKind::none:
            break;
    }
    return std::nullopt;
}

}  // namespace mlens
