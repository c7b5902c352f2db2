#include "scaled_group_stats.h"

#include <algorithm>
#include <cmath>

#include "binning_avx512.h"
#include "centred_sums.h"
#include "mlens/util/parallel_job.h"
#include "pass_totals.h"
#include "slot_copies.h"
#include "util/cpu_features.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values per chunk: a chunk's codes (a byte each) and steps stay in L2 with the counts, and the
// per-chunk work (clearing, adding up and merging 4,098 counters) is spread over many values.
constexpr uint64_t kChunkTarget = 1u << 18;
// Values tallied at a time by the plain loops: their values and slots stay in L1.
constexpr uint64_t kTile = 2048;
// Values tallied at a time by the AVX-512 pass: each call's set-up, reductions and last bins are
// spread over many values, and its counts stay below SlotCopies::kFlushAfter.
constexpr uint64_t kSpan = 1u << 16;

// Adds n <= kTile values, value i being step[(first + i) / length] * code[i] (+ offset[...]),
// computed in float one rounding per operation, to `sums` (power sums in double, value by value)
// and their slots to `counts` (through `copies`), in loops that the compiler vectorizes. The
// plain route, and the reference the vector route is tested against.
MLENS_VECTOR_LOOP void tally_plainly(const uint8_t* code, bool is_signed, const float* step, const float* offset, uint64_t first, uint64_t n,
                                     uint32_t length, const BinSlots& bin, double centre, CentredSums& sums, SlotCopies& copies,
                                     uint32_t* counts) {
    float value[kTile];
    uint32_t slot[kTile];
    if (is_signed)
        for (uint64_t i = 0; i < n; ++i) value[i] = static_cast<float>(static_cast<int8_t>(code[i]));
    else
        for (uint64_t i = 0; i < n; ++i) value[i] = static_cast<float>(code[i]);
    for (uint64_t i = 0; i < n; ++i) value[i] = step[(first + i) / length] * value[i];
    if (offset)
        for (uint64_t i = 0; i < n; ++i) value[i] = value[i] + offset[(first + i) / length];
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
// One span of `groups` groups (groups * length <= kSpan values, length a multiple of 16) with
// AVX-512, 16 values (all or part of one group) per vector: each value step * code (+ offset)
// computed in float, binned with candidate_index16 (the pass compares its extremes with the
// quick range it was given), its zero, extremes and power sums (in double, fused multiply-adds)
// tallied. Bins go to a ring of kRing slots and are counted in the four copies kLag at a time,
// half a ring behind, once the lanes in doubt among them are settled: the increments (two memory
// operations each, the pass's bound) then run beside the vector work of the next vectors.
template <bool kSigned, bool kOffset>
MLENS_AVX512_TARGET void tally_avx512(const uint8_t* code, const float* step, const float* offset, uint64_t groups, uint32_t length,
                                      const BinSlots& bin, double centre, CentredSums& sums, SlotCopies& copies, uint32_t* counts) {
    constexpr uint32_t kRing = 128, kLag = kRing / 2;
    const __m512 zero = _mm512_setzero_ps();
    const __m512d middle = _mm512_set1_pd(centre);
    const __m512d magnitude = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    const __m512i one = _mm512_set1_epi32(1);
    __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
    __m512i zeros = _mm512_setzero_si512();
    // Power sums in two sets, one for each half of a vector, so that each sum's chain of
    // dependent adds is half as long: bound by its latency, it would hold the increments back.
    __m512d s1[2], s2[2], s3[2], s4[2], a[2];
    for (int h = 0; h < 2; ++h) s1[h] = s2[h] = s3[h] = s4[h] = a[h] = _mm512_setzero_pd();
    alignas(64) uint32_t slot[kRing];
    // Beside each vector's bins in the ring: its values, and the lanes whose bins settling may
    // move, settled one at a time before they are counted.
    alignas(64) float held[kRing];
    uint16_t doubt[kRing / 16];
    auto settle = [&](uint64_t from, uint64_t to) {
        for (uint64_t v = from; v < to; v += 16)
            for (uint32_t lanes = doubt[(v & (kRing - 1)) / 16]; lanes != 0; lanes &= lanes - 1) {
                const uint64_t i = (v & (kRing - 1)) + static_cast<uint64_t>(__builtin_ctz(lanes));
                slot[i] = static_cast<uint32_t>(bin.settled(held[i], static_cast<int32_t>(slot[i])));
            }
    };
    uint64_t done = 0, counted = 0;
    const uint64_t n = groups * length;
    uint16_t* const c0 = copies.reserve(n, counts) + 1;  // from the first bin's slot
    uint16_t* const c1 = c0 + copies.slots();
    uint16_t* const c2 = c1 + copies.slots();
    uint16_t* const c3 = c2 + copies.slots();
    for (uint64_t g = 0; g < groups; ++g) {
        const __m512 times = _mm512_set1_ps(step[g]), plus = _mm512_set1_ps(kOffset ? offset[g] : 0.0f);
        for (uint32_t at = 0; at < length; at += 16) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(code + g * length + at));
            const __m512i q = kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
            __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(q), times);
            if constexpr (kOffset) x = _mm512_add_ps(x, plus);
            __mmask16 in_doubt;
            _mm512_store_si512(slot + (done & (kRing - 1)), candidate_index16(x, bin, in_doubt));
            _mm512_store_ps(held + (done & (kRing - 1)), x);
            doubt[(done & (kRing - 1)) / 16] = in_doubt;
            done += 16;
            if (done - counted == kRing) {
                settle(counted, counted + kLag);
                const uint32_t* ready = slot + (counted & (kRing - 1));
                for (uint32_t i = 0; i < kLag; i += 4) {
                    ++c0[ready[i]];
                    ++c1[ready[i + 1]];
                    ++c2[ready[i + 2]];
                    ++c3[ready[i + 3]];
                }
                counted += kLag;
            }
            zeros = _mm512_mask_add_epi32(zeros, _mm512_cmp_ps_mask(x, zero, _CMP_EQ_OQ), zeros, one);
            lo = _mm512_min_ps(lo, x);
            hi = _mm512_max_ps(hi, x);
            for (int half = 0; half < 2; ++half) {
                const __m512d xd = _mm512_cvtps_pd(half ? _mm512_extractf32x8_ps(x, 1) : _mm512_castps512_ps256(x));
                const __m512d d = _mm512_sub_pd(xd, middle), d2 = _mm512_mul_pd(d, d);
                a[half] = _mm512_add_pd(a[half], _mm512_and_pd(xd, magnitude));
                s1[half] = _mm512_add_pd(s1[half], d);
                s2[half] = _mm512_add_pd(s2[half], d2);
                s3[half] = _mm512_fmadd_pd(d2, d, s3[half]);
                s4[half] = _mm512_fmadd_pd(d2, d2, s4[half]);
            }
        }
    }
    // The bins not yet counted, each to its copy as above.
    settle(counted, done);
    uint16_t* const copy[4] = {c0, c1, c2, c3};
    for (uint64_t i = counted; i < done; ++i) ++copy[i & 3][slot[i & (kRing - 1)]];
    sums.add({static_cast<double>(n), static_cast<double>(_mm512_reduce_add_epi32(zeros)), _mm512_reduce_add_pd(_mm512_add_pd(a[0], a[1])),
              _mm512_reduce_add_pd(_mm512_add_pd(s1[0], s1[1])), _mm512_reduce_add_pd(_mm512_add_pd(s2[0], s2[1])),
              _mm512_reduce_add_pd(_mm512_add_pd(s3[0], s3[1])), _mm512_reduce_add_pd(_mm512_add_pd(s4[0], s4[1])),
              _mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi)});
}

#endif

// Tallies one chunk of groups read from the source into `sums` and `counts`.
void tally_chunk(const uint8_t* code, const float* step, const float* offset, uint64_t count, uint32_t length, bool is_signed, bool vectors,
                 const BinSlots& bin, double centre, CentredSums& sums, SlotCopies& copies, uint32_t* counts) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (vectors && length % 16 == 0 && length <= kSpan) {
        const uint64_t groups = count / length, per_tile = kSpan / length;
        for (uint64_t g = 0; g < groups; g += per_tile) {
            const uint64_t here = std::min(per_tile, groups - g);
            const uint8_t* c = code + g * length;
            if (is_signed)
                tally_avx512<true, false>(c, step + g, nullptr, here, length, bin, centre, sums, copies, counts);
            else
                tally_avx512<false, true>(c, step + g, offset + g, here, length, bin, centre, sums, copies, counts);
        }
        return;
    }
#else
    (void)vectors;
#endif
    for (uint64_t at = 0; at < count; at += kTile)
        tally_plainly(code + at, is_signed, step, offset, at, std::min(kTile, count - at), length, bin, centre, sums, copies, counts);
}

}  // namespace

Status summarize_scaled_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                               double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total, bool vectors) {
    const bool scaled = src.scaled_groups() != 0;
    const uint32_t length = scaled ? src.scaled_groups() : src.offset_groups().length;
    const uint64_t size = src.size(), chunk = src.chunk_length(kChunkTarget);
    total.assign(binning.slots(), 0);
    PassTotals totals(total);
    const BinSlots bin(binning);
    const double centre = (binning.lo + binning.hi) / 2;
#if defined(__x86_64__) && defined(__GNUC__)
    vectors = vectors && avx512_paths_allowed();
#endif
    Status run = parallel_job((size + chunk - 1) / chunk, threads, job,
                        [&](uint64_t c) -> Status {
                            std::vector<uint8_t>& code = thread_scratch<std::vector<uint8_t>>([] {});
                            std::vector<float>& step = thread_scratch<std::vector<float>>([] {});
                            std::vector<float>& offset = thread_scratch<std::vector<float>>([] {});
                            std::vector<uint32_t>& local = thread_scratch<std::vector<uint32_t>>([] {});
                            const uint64_t first = c * chunk, count = std::min(chunk, size - first), groups = count / length;
                            code.resize(count);
                            step.resize(groups);
                            if (scaled) {
                                Status s = src.read_scaled_groups(first, count, reinterpret_cast<int8_t*>(code.data()), step.data());
                                if (!s) return s;
                            } else {
                                offset.resize(groups);
                                if (Status s = src.read_offset_groups(first, count, code.data(), step.data(), offset.data()); !s) return s;
                            }
                            SlotCopies& copies = thread_scratch<SlotCopies>([] {});
                            local.assign(binning.slots(), 0);
                            copies.reset(binning.slots());
                            CentredSums sums;
                            tally_chunk(code.data(), step.data(), scaled ? nullptr : offset.data(), count, length, scaled, vectors, bin, centre,
                                        sums, copies, local.data());
                            copies.flush(local.data());
                            totals.hand_in(first, sums.summary(centre), local);
                            return ok_status();
                        },
                        progress_from, progress_to);
    totals.merge_into(all);
    return run;
}

}  // namespace mlens
