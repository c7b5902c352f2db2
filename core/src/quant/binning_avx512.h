// BinSlots (binning.h) for 16 floats at once with AVX-512, shared by the passes that bin values
// in vectors (code_group_stats.cpp, scaled_group_stats.cpp). Internal to core/quant.
//
// Contract: bin_in_range16(x, bin) gives each lane within [lo, hi] its slot exactly as
// BinSlots::operator() does: the same float operations in the same order, max and min with 0 and
// the last bin (the below and above selects never apply there, and are left out). Any other lane,
// NaN included, gets a slot in [1, bins], never outside the counters. bin_index16(x, bin) gives
// the same slot less one (the bin), in two operations fewer: the clamps done once, on the
// truncated integer as unsigned (a negative, NaN or huge lane becomes the last bin; within
// [lo, hi], truncating then clamping to the integer last bin equals clamping then truncating). It is for passes over
// values whose range was found before them, which compare the least and greatest value they saw
// with that range and discard their counts when either differs. For callers compiled with
// MLENS_AVX512_TARGET, whose features it needs; x86-64 with GCC only. Including it turns off GCC's uninitialized-value warnings for the
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

[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i bin_in_range16(__m512 x, const BinSlots& bin) {
    __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(bin.first)), _mm512_set1_ps(bin.scale));
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(bin.last));
    return _mm512_add_epi32(_mm512_cvttps_epi32(t), _mm512_set1_epi32(1));
}

[[gnu::always_inline]] MLENS_AVX512_TARGET inline __m512i bin_index16(__m512 x, const BinSlots& bin) {
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(bin.first)), _mm512_set1_ps(bin.scale));
    return _mm512_min_epu32(_mm512_cvttps_epi32(t), _mm512_set1_epi32(static_cast<int>(bin.last)));
}

}  // namespace mlens

#endif
