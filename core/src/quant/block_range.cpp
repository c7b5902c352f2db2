#include "block_range.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "block_fields.h"
#include "k_quant_scales.h"
#include "mlens/formats/ggml_type_table.h"
#include "util/finite_floats.h"
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
        thread_local Groups g;
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

// Q8_0: q * d, 34-byte blocks of d and 32 signed bytes.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q8_0(const uint8_t* bytes, uint64_t blocks) {
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

// Q4_K: 144-byte blocks of d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of codes; each
// 32 bytes hold two 32-value sub-blocks (low nibbles, then high), decoded d*sc*q - dmin*m.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q4_k(const uint8_t* bytes, uint64_t blocks) {
    const float* d = half_field(bytes, blocks, 144, 0, 0);
    const float* dmin = half_field(bytes, blocks, 144, 2, 1);
    Groups& g = Groups::for_thread(8 * blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 144;
        for (int pair = 0; pair < 4; ++pair) {
            const NibbleExtremes e = nibble_extremes<32>(block + 16 + 32 * pair);
            int sc = 0, m = 0;
            k_quant_scale_min(block + 4, 2 * pair, sc, m);
            g.set(8 * b + 2 * pair, d[b], sc, dmin[b], m, e.low_min, e.low_max);
            k_quant_scale_min(block + 4, 2 * pair + 1, sc, m);
            g.set(8 * b + 2 * pair + 1, d[b], sc, dmin[b], m, e.high_min, e.high_max);
        }
    }
    return group_range(g, 8 * blocks);
}

// IQ4_XS: 136-byte blocks of d, 16-bit high scale bits, 4 bytes of low scale bits, 128 bytes of
// codes; sub-block i (16 bytes, both nibbles) decodes d * (ls - 32) * table[q].
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_iq4_xs(const uint8_t* bytes, uint64_t blocks) {
    const float* d = half_field(bytes, blocks, 136, 0);
    Groups& g = Groups::for_thread(8 * blocks);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        const uint16_t high = static_cast<uint16_t>(block[2] | block[3] << 8);
        for (int i = 0; i < 8; ++i) {
            const int ls = ((block[4 + i / 2] >> 4 * (i % 2)) & 0xF) | (((high >> 2 * i) & 3) << 4);
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
        case BlockRangeKind::q8_0:
            return range_q8_0(bytes, blocks);
        case BlockRangeKind::q4_k:
            return range_q4_k(bytes, blocks);
        case BlockRangeKind::iq4_xs:
            return range_iq4_xs(bytes, blocks);
        case BlockRangeKind::none:
            break;
    }
    return std::nullopt;
}

}  // namespace mlens
