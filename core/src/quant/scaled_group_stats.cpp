#include "scaled_group_stats.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "binning_avx512.h"
#include "centred_sums.h"
#include "mlens/util/parallel_job.h"
#include "slot_copies.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values per chunk: a chunk's codes (a byte each) and steps stay in L2 with the counts, and the
// per-chunk work (clearing, adding up and merging 4,098 counters) is spread over many values.
constexpr uint64_t kChunkTarget = 1u << 18;
// Values tallied at a time by the plain loops: their values and slots stay in L1.
constexpr uint64_t kTile = 2048;

// Adds n <= kTile values, value i being step[(first + i) / length] * code[i], to `sums` and their
// slots to `counts` (through `copies`), in loops that the compiler vectorizes.
MLENS_VECTOR_LOOP void tally_plainly(const int8_t* code, const float* step, uint64_t first, uint64_t n, uint32_t length,
                                     const BinSlots& bin, double centre, CentredSums& sums, SlotCopies& copies, uint32_t* counts) {
    float value[kTile];
    uint32_t slot[kTile];
    for (uint64_t i = 0; i < n; ++i) value[i] = step[(first + i) / length] * static_cast<float>(code[i]);
    float lo = INFINITY, hi = -INFINITY;
    uint32_t z = 0;
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, a = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : z, s1, s2, s3, s4, a)
    for (uint64_t i = 0; i < n; ++i) {
        const float x = value[i];
        slot[i] = bin(x);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        z += x == 0.0f;
        const double d = static_cast<double>(x) - centre, d2 = d * d;
        a += std::fabs(static_cast<double>(x));
        s1 += d;
        s2 += d2;
        s3 += d2 * d;
        s4 += d2 * d2;
    }
    copies.add(slot, n, counts);
    sums.add({static_cast<double>(n), static_cast<double>(z), a, s1, s2, s3, s4, lo, hi});
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with AVX-512 over `groups` groups (groups * length <= kTile values), 16 values (all or
// part of one group) per vector: each value step * code binned with bin_in_range16 (the pass
// compares its extremes with the quick range it was given), the power sums in double with fused
// multiply-adds; the slots are stored, then counted in a loop of their own, so that the vector
// work is not held up by the increments.
MLENS_AVX512_TARGET void tally_avx512(const int8_t* code, const float* step, uint64_t groups, uint32_t length, const BinSlots& bin,
                                      double centre, CentredSums& sums, SlotCopies& copies, uint32_t* counts) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512d middle = _mm512_set1_pd(centre);
    const __m512d magnitude = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
    __m512d s1 = _mm512_setzero_pd(), s2 = s1, s3 = s1, s4 = s1, a = s1;
    uint64_t zeros = 0;
    alignas(64) uint32_t slot[kTile];
    uint32_t* next = slot;
    for (uint64_t g = 0; g < groups; ++g) {
        const __m512 times = _mm512_set1_ps(step[g]);
        for (uint32_t at = 0; at < length; at += 16, next += 16) {
            const __m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(code + g * length + at)));
            const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(q), times);
            _mm512_store_si512(next, bin_in_range16(x, bin));
            zeros += static_cast<uint64_t>(__builtin_popcount(_mm512_cmp_ps_mask(x, zero, _CMP_EQ_OQ)));
            lo = _mm512_min_ps(lo, x);
            hi = _mm512_max_ps(hi, x);
            for (int half = 0; half < 2; ++half) {
                const __m512d xd = _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(x, 1) : _mm512_castps512_ps256(x));
                const __m512d d = _mm512_sub_pd(xd, middle), d2 = _mm512_mul_pd(d, d);
                a = _mm512_add_pd(a, _mm512_and_pd(xd, magnitude));
                s1 = _mm512_add_pd(s1, d);
                s2 = _mm512_add_pd(s2, d2);
                s3 = _mm512_fmadd_pd(d2, d, s3);
                s4 = _mm512_fmadd_pd(d2, d2, s4);
            }
        }
    }
    const uint64_t n = groups * length;
    copies.add(slot, n, counts);
    sums.add({static_cast<double>(n), static_cast<double>(zeros), _mm512_reduce_add_pd(a), _mm512_reduce_add_pd(s1),
              _mm512_reduce_add_pd(s2), _mm512_reduce_add_pd(s3), _mm512_reduce_add_pd(s4), _mm512_reduce_min_ps(lo),
              _mm512_reduce_max_ps(hi)});
}
#endif

}  // namespace

Status summarize_scaled_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                               double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total) {
    const uint32_t length = src.scaled_groups();
    const uint64_t size = src.size(), chunk = src.chunk_length(kChunkTarget);
    total.assign(binning.slots(), 0);
    std::mutex m;
    const BinSlots bin(binning);
    const double centre = (binning.lo + binning.hi) / 2;
    return parallel_job((size + chunk - 1) / chunk, threads, job,
                        [&](uint64_t c) -> Status {
                            thread_local std::vector<int8_t> code;
                            thread_local std::vector<float> step;
                            thread_local std::vector<uint32_t> local;
                            const uint64_t first = c * chunk, count = std::min(chunk, size - first), groups = count / length;
                            code.resize(count);
                            step.resize(groups);
                            if (Status s = src.read_scaled_groups(first, count, code.data(), step.data()); !s) return s;
                            thread_local SlotCopies copies;
                            local.assign(binning.slots(), 0);
                            copies.reset(binning.slots());
                            CentredSums sums;
#if defined(__x86_64__) && defined(__GNUC__)
                            static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
                            if (avx512 && length % 16 == 0 && length <= kTile) {
                                const uint64_t per_tile = kTile / length;
                                for (uint64_t g = 0; g < groups; g += per_tile)
                                    tally_avx512(code.data() + g * length, step.data() + g, std::min(per_tile, groups - g), length, bin,
                                                 centre, sums, copies, local.data());
                            } else
#endif
                            {
                                for (uint64_t at = 0; at < count; at += kTile)
                                    tally_plainly(code.data() + at, step.data(), at, std::min(kTile, count - at), length, bin, centre, sums,
                                                  copies, local.data());
                            }
                            copies.flush(local.data());
                            std::lock_guard lock(m);
                            all.merge(sums.summary(centre));
                            for (size_t i = 0; i < local.size(); ++i) total[i] += local[i];
                            return ok_status();
                        },
                        progress_from, progress_to);
}

}  // namespace mlens
