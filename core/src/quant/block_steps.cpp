#include "block_steps.h"

#include <cstring>

#include "block_fields.h"
#include "block_fields_avx512.h"
#include "mlens/formats/ggml_type_table.h"
#include "util/cpu_features.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

BlockStepsKind steps_kind(uint32_t ggml_type) {
    const GgmlTypeRow* row = ggml_type_row(ggml_type);
    return row ? row->steps : BlockStepsKind::none;
}

// Q8_0: 34-byte blocks of d and 32 signed codes.
void q8_0_groups(const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps) {
    std::memcpy(steps, half_field(bytes, blocks, 34, 0), blocks * sizeof(float));
    for (uint64_t b = 0; b < blocks; ++b) std::memcpy(codes + 32 * b, bytes + 34 * b + 2, 32);
}

// Q6_K: 210-byte blocks of 128 bytes of low nibbles, 64 bytes of two-bit pairs, 16 signed
// sub-block scales and d. In each half (64 nibble bytes, 32 pair bytes, 8 scales), value l + 32k
// (q6_k_code) has scale l / 16 + 2k: group 8 * half + 2k + l / 16 holds values 32k + l of the
// half, 16 at a time, whose 32 codes are contiguous here.
MLENS_VECTOR_LOOP void q6_k_groups_plainly(const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps) {
    const float* d = half_field(bytes, blocks, 210, 208);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 210;
        for (int half = 0; half < 2; ++half) {
            const uint8_t* ql = block + 64 * half;
            const uint8_t* qh = block + 128 + 32 * half;
            const auto* sc = reinterpret_cast<const int8_t*>(block + 192 + 8 * half);
            int8_t* out = codes + (16 * b + 8 * half) * 16;
            for (int k = 0; k < 4; ++k) {
                int8_t* q = out + 32 * k;
                for (int l = 0; l < 32; ++l)
                    q[l] = static_cast<int8_t>(q6_k_code(ql, qh, l, k) - 32);
            }
            for (int g = 0; g < 8; ++g) steps[16 * b + 8 * half + g] = d[b] * static_cast<float>(sc[g]);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with AVX-512: each half block's codes in two vectors (q6_k_half_codes), a block's 16
// steps in one (q6_k_steps).
MLENS_FIELDS_TARGET void q6_k_groups_avx512(const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps) {
    const __m512i bias = _mm512_set1_epi8(32);
    for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + b * 210;
        for (int half = 0; half < 2; ++half)
            for (int upper = 0; upper < 2; ++upper)
                _mm512_storeu_si512(codes + (16 * b + 8 * half) * 16 + 64 * upper,
                                    _mm512_sub_epi8(q6_k_half_codes(block + 64 * half, block + 128 + 32 * half, upper != 0), bias));
        _mm512_storeu_ps(steps + 16 * b, q6_k_steps(block));
    }
}
#endif

void q6_k_groups(const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (avx512_paths_allowed()) return q6_k_groups_avx512(bytes, blocks, codes, steps);
#endif
    q6_k_groups_plainly(bytes, blocks, codes, steps);
}

}  // namespace

uint32_t block_scaled_groups(uint32_t ggml_type) {
    const BlockStepsKind kind = steps_kind(ggml_type);
    switch (kind) {
        case BlockStepsKind::q8_0:
            return 32;
        case BlockStepsKind::q6_k:
            return 16;
        case BlockStepsKind::none:
            break;
    }
    return 0;
}

void read_block_scaled_groups(uint32_t ggml_type, const uint8_t* bytes, uint64_t blocks, int8_t* codes, float* steps) {
    const BlockStepsKind kind = steps_kind(ggml_type);
    switch (kind) {
        case BlockStepsKind::q8_0:
            return q8_0_groups(bytes, blocks, codes, steps);
        case BlockStepsKind::q6_k:
            return q6_k_groups(bytes, blocks, codes, steps);
        case BlockStepsKind::none:
            break;
    }
}

}  // namespace mlens
