#include "block_range.h"

#include <ggml.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "element_decode.h"
#include "util/vector_loop.h"
#include "value_extremes.h"

namespace mlens {

namespace {

// ggml's IQ4_NL / IQ4_XS value table (increasing).
constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The float16 stored at `offset` in each block, as floats, in a per-thread buffer (`which`
// selects one of two, for types with two such fields).
const float* half_field(const uint8_t* bytes, uint64_t blocks, uint32_t block_bytes, uint32_t offset, int which = 0) {
    thread_local std::vector<uint8_t> halves;
    thread_local std::vector<float> values[2];
    halves.resize(2 * blocks);
    values[which].resize(blocks);
    for (uint64_t b = 0; b < blocks; ++b) std::memcpy(&halves[2 * b], bytes + b * block_bytes + offset, 2);
    decode_elements(ElementType::f16, halves.data(), blocks, values[which].data());
    return values[which].data();
}

// Least and greatest code among the low nibbles and among the high nibbles of n bytes.
struct NibbleExtremes {
    uint8_t low_min = 15, low_max = 0, high_min = 15, high_max = 0;
};
NibbleExtremes nibble_extremes(const uint8_t* p, int n) {
    NibbleExtremes e;
    for (int i = 0; i < n; ++i) {
        const uint8_t low = p[i] & 15, high = p[i] >> 4;
        e.low_min = std::min(e.low_min, low);
        e.low_max = std::max(e.low_max, low);
        e.high_min = std::min(e.high_min, high);
        e.high_max = std::max(e.high_max, high);
    }
    return e;
}

// Q4_0: (q - 8) * d; IQ4_NL: d * table[q]. 18-byte blocks: d, then 16 bytes of two nibbles that
// share d.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_18_byte(const uint8_t* bytes, uint64_t blocks, bool iq4) {
    const float* d = half_field(bytes, blocks, 18, 0);
    ValueExtremes x;
    for (uint64_t b = 0; b < blocks; ++b) {
        const NibbleExtremes e = nibble_extremes(bytes + b * 18 + 2, 16);
        const int least = std::min(e.low_min, e.high_min), greatest = std::max(e.low_max, e.high_max);
        if (iq4) x.add(d[b] * static_cast<float>(kIq4Values[least]), d[b] * static_cast<float>(kIq4Values[greatest]));
        else x.add(static_cast<float>(least - 8) * d[b], static_cast<float>(greatest - 8) * d[b]);
    }
    return x.range();
}

// Q8_0: q * d, 34-byte blocks of d and 32 signed bytes.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q8_0(const uint8_t* bytes, uint64_t blocks) {
    const float* d = half_field(bytes, blocks, 34, 0);
    ValueExtremes x;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* q = bytes + b * 34 + 2;
        // Signed bytes compared as unsigned after flipping the sign bit.
        uint8_t least = 255, greatest = 0;
        for (int i = 0; i < 32; ++i) {
            const auto u = static_cast<uint8_t>(q[i] ^ 0x80);
            least = std::min(least, u);
            greatest = std::max(greatest, u);
        }
        x.add(static_cast<float>(static_cast<int8_t>(least ^ 0x80)) * d[b],
              static_cast<float>(static_cast<int8_t>(greatest ^ 0x80)) * d[b]);
    }
    return x.range();
}

// Q4_K: 144-byte blocks of d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of codes; each
// 32 bytes hold two 32-value sub-blocks (low nibbles, then high), decoded d*sc*q - dmin*m.
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_q4_k(const uint8_t* bytes, uint64_t blocks) {
    const float* d = half_field(bytes, blocks, 144, 0, 0);
    const float* dmin = half_field(bytes, blocks, 144, 2, 1);
    ValueExtremes x;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 144;
        const uint8_t* s = block + 4;
        auto scale_min = [s](int j, uint8_t& sc, uint8_t& m) {
            if (j < 4) {
                sc = s[j] & 63;
                m = s[j + 4] & 63;
            } else {
                sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
                m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
            }
        };
        for (int pair = 0; pair < 4; ++pair) {
            const NibbleExtremes e = nibble_extremes(block + 16 + 32 * pair, 32);
            uint8_t sc = 0, m = 0;
            scale_min(2 * pair, sc, m);
            float d1 = d[b] * static_cast<float>(sc), m1 = dmin[b] * static_cast<float>(m);
            x.add(d1 * static_cast<float>(e.low_min) - m1, d1 * static_cast<float>(e.low_max) - m1);
            scale_min(2 * pair + 1, sc, m);
            d1 = d[b] * static_cast<float>(sc);
            m1 = dmin[b] * static_cast<float>(m);
            x.add(d1 * static_cast<float>(e.high_min) - m1, d1 * static_cast<float>(e.high_max) - m1);
        }
    }
    return x.range();
}

// IQ4_XS: 136-byte blocks of d, 16-bit high scale bits, 4 bytes of low scale bits, 128 bytes of
// codes; sub-block i (16 bytes, both nibbles) decodes d * (ls - 32) * table[q].
MLENS_VECTOR_LOOP std::optional<ValueBounds> range_iq4_xs(const uint8_t* bytes, uint64_t blocks) {
    const float* d = half_field(bytes, blocks, 136, 0);
    ValueExtremes x;
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 136;
        const uint16_t high = static_cast<uint16_t>(block[2] | block[3] << 8);
        for (int i = 0; i < 8; ++i) {
            const int ls = ((block[4 + i / 2] >> 4 * (i % 2)) & 0xF) | (((high >> 2 * i) & 3) << 4);
            const float dl = d[b] * static_cast<float>(ls - 32);
            const NibbleExtremes e = nibble_extremes(block + 8 + 16 * i, 16);
            const int least = std::min(e.low_min, e.high_min), greatest = std::max(e.low_max, e.high_max);
            x.add(dl * static_cast<float>(kIq4Values[least]), dl * static_cast<float>(kIq4Values[greatest]));
        }
    }
    return x.range();
}

}  // namespace

bool has_block_value_range(uint32_t ggml_type) {
    switch (ggml_type) {
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_K: case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS:
            return true;
        default:
            return false;
    }
}

std::optional<ValueBounds> block_value_range(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks) {
    switch (ggml_type) {
        case GGML_TYPE_Q4_0: return range_18_byte(bytes, blocks, false);
        case GGML_TYPE_IQ4_NL: return range_18_byte(bytes, blocks, true);
        case GGML_TYPE_Q8_0: return range_q8_0(bytes, blocks);
        case GGML_TYPE_Q4_K: return range_q4_k(bytes, blocks);
        case GGML_TYPE_IQ4_XS: return range_iq4_xs(bytes, blocks);
        default: return std::nullopt;
    }
}

}  // namespace mlens
