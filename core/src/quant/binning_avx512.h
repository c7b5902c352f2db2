// BinSlots (binning.h) for 16 floats at once with AVX-512, shared by the passes that bin values
// in vectors (code_group_stats.cpp, scaled_group_stats.cpp). Internal to core/quant.
//
// Contract: bin_slots16(x, bin) gives each lane's slot exactly as BinSlots::operator() does: the
// same float operations in the same order, max and min with 0 and the last bin, then the below
// and above selects by the same compares (a NaN lane compares false throughout and lands where
// the scalar code puts it). For callers compiled with MLENS_AVX512_TARGET, whose features it
// needs; x86-64 with GCC only. Including it turns off GCC's uninitialized-value warnings for the
// rest of the file: GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(),
// which those warnings take for a read of an uninitialized variable.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "binning.h"

#define MLENS_AVX512_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,fma")))

namespace mlens {

[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i bin_slots16(__m512 x, const BinSlots& bin) {
    __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(bin.first)), _mm512_set1_ps(bin.scale));
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(bin.last));
    __m512i s = _mm512_add_epi32(_mm512_cvttps_epi32(t), _mm512_set1_epi32(1));
    s = _mm512_maskz_mov_epi32(~_mm512_cmp_ps_mask(x, _mm512_set1_ps(bin.lowest), _CMP_LT_OQ), s);
    return _mm512_mask_mov_epi32(s, _mm512_cmp_ps_mask(x, _mm512_set1_ps(bin.highest), _CMP_GT_OQ), _mm512_set1_epi32(bin.above));
}

}  // namespace mlens

#endif
