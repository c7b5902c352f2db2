// The least and greatest codes of groups and of values computed sixteen at a time with AVX-512,
// for the range readers that compute each group's end values in vectors (small_block_range.cpp,
// k_quant_range.cpp, q8_0_range.cpp, iq4_xs_range.cpp, q6_k_range.cpp). Internal to core/quant.
//
// Contract: fold_lane_ends(least, most) takes, in each 128-bit lane, 16 bytes of one group's codes
// (`least`) and of the complements of its codes (`most`, top - code) and gives that lane's least
// code in byte 0 of its lower 64-bit half and least complement (top - its greatest code) in byte 0
// of its upper half. VectorExtremes::add(lanes, a, z) folds the lanes of a and z that `lanes`
// selects into the least and greatest seen and notes whether any of them is NaN or infinite;
// covers(lanes, lower, upper) is whether every selected lane's [lower, upper] lies within the
// least and greatest seen (never for a NaN bound), so that a reader may skip groups whose values
// it bounds so, and covers_span(lanes, a, z) the same for values between a and z either way
// round; bounds() is nullopt when a value added was NaN or infinite or when nothing was
// added, else the least and greatest. For callers compiled with MLENS_EXTREMES_TARGET; x86-64
// with GCC only. Including it turns off GCC's uninitialized-value warnings for the rest of the
// file (util/avx512_intrinsics.h).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "util/avx512_intrinsics.h"

#include <cmath>
#include <optional>

#include "mlens/quant/float_source.h"
#include "util/cpu_features.h"

#define MLENS_EXTREMES_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))

namespace mlens {

// Whether this CPU runs code compiled with MLENS_EXTREMES_TARGET. F16C is not asked for: every
// CPU with AVX-512F has it, and clang's __builtin_cpu_supports does not know the name.
inline bool extremes_target_supported() { return avx512_paths_allowed(); }

[[gnu::always_inline]] MLENS_EXTREMES_TARGET inline __m512i fold_lane_ends(__m512i least, __m512i most) {
    least = _mm512_min_epu8(least, _mm512_bsrli_epi128(least, 8));
    most = _mm512_min_epu8(most, _mm512_bsrli_epi128(most, 8));
    __m512i both = _mm512_unpacklo_epi64(least, most);
    both = _mm512_min_epu8(both, _mm512_srli_epi64(both, 32));
    both = _mm512_min_epu8(both, _mm512_srli_epi64(both, 16));
    return _mm512_min_epu8(both, _mm512_srli_epi64(both, 8));
}

struct VectorExtremes {
    __m512 lo, hi;
    __mmask16 bad = 0;
    bool any = false;
    float least = INFINITY, greatest = -INFINITY;

    MLENS_EXTREMES_TARGET VectorExtremes() : lo(_mm512_set1_ps(INFINITY)), hi(_mm512_set1_ps(-INFINITY)) {}

    [[gnu::always_inline]] MLENS_EXTREMES_TARGET void add(__mmask16 lanes, __m512 a, __m512 z) {
        // x - x is NaN exactly when x is NaN or infinite.
        bad |= _mm512_mask_cmp_ps_mask(lanes, _mm512_sub_ps(a, a), _mm512_setzero_ps(), _CMP_NEQ_UQ);
        bad |= _mm512_mask_cmp_ps_mask(lanes, _mm512_sub_ps(z, z), _mm512_setzero_ps(), _CMP_NEQ_UQ);
        lo = _mm512_mask_min_ps(lo, lanes, lo, _mm512_min_ps(a, z));
        hi = _mm512_mask_max_ps(hi, lanes, hi, _mm512_max_ps(a, z));
        any = any || lanes != 0;
        least = _mm512_reduce_min_ps(lo);
        greatest = _mm512_reduce_max_ps(hi);
    }

    // Whether every selected lane's values, which lie between `a` and `z` (either way round), are
    // within the extremes seen.
    [[gnu::always_inline]] MLENS_EXTREMES_TARGET bool covers_span(__mmask16 lanes, __m512 a, __m512 z) const {
        return covers(lanes, _mm512_min_ps(a, z), _mm512_max_ps(a, z));
    }

    [[gnu::always_inline]] MLENS_EXTREMES_TARGET bool covers(__mmask16 lanes, __m512 lower, __m512 upper) const {
        const __mmask16 above = _mm512_mask_cmp_ps_mask(lanes, lower, _mm512_set1_ps(least), _CMP_GE_OQ);
        const __mmask16 below = _mm512_mask_cmp_ps_mask(lanes, upper, _mm512_set1_ps(greatest), _CMP_LE_OQ);
        return (above & below) == lanes;
    }

    MLENS_EXTREMES_TARGET std::optional<ValueBounds> bounds() const {
        if (bad != 0 || !any) return std::nullopt;
        return ValueBounds{_mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi)};
    }
};

}  // namespace mlens

#endif
