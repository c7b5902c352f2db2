// The 6-bit sub-block scale and min of Q4_K and Q5_K blocks. Internal to core/quant.
//
// Contract: `packed` is the block's 12 scale bytes; for sub-block j (0..7) sets sc and m as
// ggml's get_scale_min_k4 does: j < 4 from the low 6 bits of bytes j and j + 4; j >= 4 from the
// nibbles of byte j + 4 with the top two bits of bytes j - 4 and j.
#pragma once

#include <cstdint>

namespace mlens {

inline void k_quant_scale_min(const uint8_t* packed, int j, int& sc, int& m) {
    if (j < 4) {
        sc = packed[j] & 63;
        m = packed[j + 4] & 63;
    } else {
        sc = (packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4);
        m = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
    }
}

}  // namespace mlens
