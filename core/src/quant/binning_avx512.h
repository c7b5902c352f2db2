// BinSlots (binning.h) for 16 floats at once with AVX-512, shared by the passes that bin values
// in vectors (code_group_stats.cpp, scaled_group_stats.cpp). Internal to core/quant.
//
// Contract: bin_in_range16(x, bin) gives each lane within [lo, hi] its slot exactly as
// BinSlots::operator() does: the same float candidate (max and min with 0 and the last bin; the
// below and above selects never apply there, and are left out), settled against the same edges.
// Any other lane, NaN included, gets a slot in [1, bins + 1], never outside the counters. It
// settles a candidate only where it is in doubt (BinSlots::doubt), against its two edges computed
// in double as Binning::over computes them: gathers from the table were measured slower on Zen 4,
// where a quarter of Q4_0's lanes over [-1, 1] lie on an edge.
// candidate_index16(x, bin, doubt) gives the candidate bins unsettled, clamped once, on the
// truncated integer as unsigned (a negative, NaN or huge lane becomes the last bin; within
// [lo, hi], truncating then clamping to the integer last bin equals clamping then truncating),
// and in `doubt` the lanes settling may move: a pass settles those one at a time with
// BinSlots::settled before it counts them, and then has each lane within [lo, hi] in its bin. It
// is for passes over values whose range was found before them, which compare the least and
// greatest value they saw with that range and discard their counts when either differs.
// Decision (decode_bench): the scaled-group pass settles later, one lane at a time, and the
// code-group pass in vectors as it goes; each was measured faster that way than the other.
// For binnings that settle in one, and callers compiled with MLENS_AVX512_TARGET, whose features
// they need; x86-64 with GCC only. Including it turns off GCC's uninitialized-value warnings for
// the rest of the file (util/avx512_intrinsics.h).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "util/avx512_intrinsics.h"

#include "binning.h"

#define MLENS_AVX512_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,fma")))

namespace mlens {

// Candidate bins `b` of x, from the float t before truncation and clamping, settled against the
// edges. In doubt are the lanes whose t is within `doubt` of a whole number from 1 to the last
// bin: near 0 or `bins` (x at lo or hi) either side gives the same bin.
[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i settled16(__m512 x, __m512 t, __m512i b, const BinSlots& bin) {
    // t less its nearest whole number.
    const __m512 off = _mm512_reduce_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 doubt = _mm512_cmp_ps_mask(_mm512_abs_ps(off), _mm512_set1_ps(bin.doubt), _CMP_LT_OQ);
    if (doubt == 0) [[likely]]
        return b;
    const __m512 whole = _mm512_sub_ps(t, off);
    doubt = _mm512_mask_cmp_ps_mask(doubt, whole, _mm512_set1_ps(1.0f), _CMP_GE_OQ);
    doubt = _mm512_mask_cmp_ps_mask(doubt, whole, _mm512_set1_ps(bin.last), _CMP_LE_OQ);
    if (doubt == 0) return b;
    // Each half's edges b * width + lo and (b + 1) * width + lo in double, rounded as numpy rounds
    // them (the rounding forms are never fused), against x in double.
    const __m512d width = _mm512_set1_pd(bin.width), lo = _mm512_set1_pd(bin.low), one = _mm512_set1_pd(1.0);
    __mmask8 below[2], above[2];
    for (int half = 0; half < 2; ++half) {
        const __m512d j = _mm512_cvtepi32_pd(half ? _mm512_extracti64x4_epi64(b, 1) : _mm512_castsi512_si256(b));
        const __m512d xd = _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(x, 1) : _mm512_castps512_ps256(x));
        constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        const __m512d lower = _mm512_add_round_pd(_mm512_mul_round_pd(j, width, kRound), lo, kRound);
        const __m512d upper = _mm512_add_round_pd(_mm512_mul_round_pd(_mm512_add_pd(j, one), width, kRound), lo, kRound);
        below[half] = _mm512_cmp_pd_mask(xd, lower, _CMP_LT_OQ);
        above[half] = _mm512_cmp_pd_mask(xd, upper, _CMP_GE_OQ);
    }
    // Never below bin 0 nor past the last, which also holds hi: as the table's infinite ends.
    const __m512i step = _mm512_set1_epi32(1);
    const __mmask16 down =
        _mm512_mask_cmp_epi32_mask(doubt & _mm512_kunpackb(below[1], below[0]), b, _mm512_setzero_si512(), _MM_CMPINT_GT);
    const __mmask16 up = _mm512_mask_cmp_epi32_mask(doubt & _mm512_kunpackb(above[1], above[0]), b,
                                                    _mm512_set1_epi32(static_cast<int>(bin.last)), _MM_CMPINT_LT);
    return _mm512_mask_add_epi32(_mm512_mask_sub_epi32(b, down, b, step), up, b, step);
}

[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i bin_in_range16(__m512 x, const BinSlots& bin) {
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(bin.first)), _mm512_set1_ps(bin.scale));
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(bin.last));
    return _mm512_add_epi32(settled16(x, t, _mm512_cvttps_epi32(clamped), bin), _mm512_set1_epi32(1));
}

// The candidate bins of x, unsettled, and in `doubt` the lanes settling may move (see the contract).
[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i candidate_index16(__m512 x, const BinSlots& bin, __mmask16& doubt) {
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(bin.first)), _mm512_set1_ps(bin.scale));
    const __m512 off = _mm512_reduce_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    doubt = _mm512_cmp_ps_mask(_mm512_abs_ps(off), _mm512_set1_ps(bin.doubt), _CMP_LT_OQ);
    return _mm512_min_epu32(_mm512_cvttps_epi32(t), _mm512_set1_epi32(static_cast<int>(bin.last)));
}

}  // namespace mlens

#endif
