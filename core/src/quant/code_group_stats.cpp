#include "code_group_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>

#include "binning_avx512.h"
#include "centred_sums.h"
#include "mlens/util/parallel_job.h"
#include "pass_totals.h"
#include "util/cpu_features.h"
#include "util/finite_floats.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values per chunk: a chunk's codes, code values, counts and slots stay in L2 together.
constexpr uint64_t kChunkTarget = 1u << 16;

// One chunk of groups, in per-thread buffers: codes (`length` per group), code values and their
// counts (`codes` per group).
struct GroupChunk {
    uint64_t first = 0;  // the chunk's first value
    uint64_t groups = 0;
    std::vector<uint8_t> code, count;
    std::vector<float> value;
};

// Runs fn on each chunk of the source's groups, read, on `threads` threads.
Status for_each_group_chunk(const FloatSource& src, JobContext* job, unsigned threads, double progress_from, double progress_to,
                            const std::function<void(GroupChunk&)>& fn) {
    const CodeGroups shape = src.code_groups();
    const uint64_t total = src.size(), chunk = src.chunk_length(kChunkTarget);
    return parallel_job((total + chunk - 1) / chunk, threads, job,
                        [&](uint64_t c) -> Status {
                            GroupChunk& g = thread_scratch<GroupChunk>([] {});
                            const uint64_t first = c * chunk, count = std::min(chunk, total - first);
                            g.first = first;
                            g.groups = count / shape.length;
                            g.code.resize(count);
                            g.value.resize(g.groups * shape.codes);
                            if (Status s = src.read_code_groups(first, count, g.code.data(), g.value.data()); !s) return s;
                            fn(g);
                            return ok_status();
                        },
                        progress_from, progress_to);
}

// How often each code occurs in each group: count[g * codes + c].
void count_codes_plainly(const uint8_t* code, uint64_t groups, uint32_t length, uint32_t codes, uint8_t* count) {
    std::memset(count, 0, groups * codes);
    for (uint64_t g = 0; g < groups; ++g)
        for (uint32_t i = 0; i < length; ++i) ++count[g * codes + code[g * length + i]];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with one vector compare per code and 32 codes of a group: each code's count is the
// number of bits set in a compare's mask.
template <uint32_t kCodes>
__attribute__((target("avx2,popcnt"))) void count_codes_avx2(const uint8_t* code, uint64_t groups, uint32_t length, uint8_t* count) {
    for (uint64_t g = 0; g < groups; ++g) {
        uint32_t n[kCodes] = {};
        for (uint32_t at = 0; at < length; at += 32) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(code + g * length + at));
            for (uint32_t c = 0; c < kCodes; ++c) {
                const __m256i same = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(static_cast<char>(c)));
                n[c] += static_cast<uint32_t>(__builtin_popcount(static_cast<uint32_t>(_mm256_movemask_epi8(same))));
            }
        }
        for (uint32_t c = 0; c < kCodes; ++c) count[g * kCodes + c] = static_cast<uint8_t>(n[c]);
    }
}

// With AVX-512, two 32-code groups per compare: the low and high halves of its 64-bit mask.
__attribute__((target("avx512bw,popcnt"))) void count_pairs_avx512(const uint8_t* code, uint64_t groups, uint8_t* count) {
    for (uint64_t g = 0; g + 2 <= groups; g += 2) {
        const __m512i v = _mm512_loadu_si512(code + g * 32);
        for (uint32_t c = 0; c < 16; ++c) {
            const uint64_t same = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(c)));
            count[g * 16 + c] = static_cast<uint8_t>(__builtin_popcount(static_cast<uint32_t>(same)));
            count[(g + 1) * 16 + c] = static_cast<uint8_t>(__builtin_popcount(static_cast<uint32_t>(same >> 32)));
        }
    }
}

// With GFNI and AVX-512 BITALG, no compare per code: each code of 32-code pieces, two per
// vector, becomes one set bit of a byte (codes 8j to 8j + 7 in vector j: a byte lookup of the
// code's low four bits, kept where its fifth bit is j / 2); an 8x8 bit transpose of each 8 bytes
// (gf2p8affine with the unit vectors as its input) gathers the bits of each code into one byte,
// whose popcount counts the code among those 8; a piece's counts are the sum of its four 8-byte
// quarters. Writes kCodes (16 or 32) counts per piece.
#define MLENS_GFNI_TARGET __attribute__((target("avx512f,avx512bw,avx512bitalg,gfni")))

// Of 64 codes (two pieces) as one set bit of a byte each (`bit` maps a code to its bit, `keep`
// the codes that have one here), how often each bit is set in each piece: the piece's 8 counts
// in every 64-bit lane of its half.
MLENS_GFNI_TARGET inline __m512i count_bits(__m512i codes, __mmask64 keep, __m512i bit, __m512i units) {
    const __m512i onehot = _mm512_maskz_shuffle_epi8(keep, bit, codes);
    const __m512i quarter = _mm512_popcnt_epi8(_mm512_gf2p8affine_epi64_epi8(units, onehot, 0));
    const __m512i half = _mm512_add_epi8(quarter, _mm512_shuffle_epi32(quarter, static_cast<_MM_PERM_ENUM>(0x4E)));
    return _mm512_add_epi8(half, _mm512_shuffle_i64x2(half, half, 0xB1));
}

template <uint32_t kCodes>
MLENS_GFNI_TARGET void count_pieces_gfni(const uint8_t* code, uint64_t pieces, uint8_t* count) {
    const __m512i low_bit = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0));
    const __m512i high_bit = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, -128));
    const __m512i units = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));
    const __m512i fifth = _mm512_set1_epi8(16);
    for (uint64_t p = 0; p < pieces; p += 2) {
        const bool pair = p + 1 < pieces;
        const __m512i v = _mm512_maskz_loadu_epi8(pair ? ~0ull : 0xFFFFFFFFull, code + p * 32);
        const __mmask64 upper = kCodes == 32 ? _mm512_test_epi8_mask(v, fifth) : 0;
        for (uint32_t part = 0; part < kCodes / 16; ++part) {
            const __mmask64 keep = part == 0 ? ~upper : upper;
            const __m512i both = _mm512_unpacklo_epi64(count_bits(v, keep, low_bit, units), count_bits(v, keep, high_bit, units));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(count + p * kCodes + 16 * part), _mm512_castsi512_si128(both));
            if (pair)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(count + (p + 1) * kCodes + 16 * part), _mm512_extracti32x4_epi32(both, 2));
        }
    }
}
#undef MLENS_GFNI_TARGET

// Each group's counts as the sum of its 32-value pieces' counts (`per_group` pieces a group).
void add_pieces(const uint8_t* piece, uint64_t groups, uint32_t per_group, uint32_t codes, uint8_t* count) {
    for (uint64_t g = 0; g < groups; ++g)
        for (uint32_t c = 0; c < codes; ++c) {
            uint32_t n = 0;
            for (uint32_t p = 0; p < per_group; ++p) n += piece[(g * per_group + p) * codes + c];
            count[g * codes + c] = static_cast<uint8_t>(n);
        }
}
#endif

void count_group_codes(const CodeGroups& shape, GroupChunk& g) {
    g.count.resize(g.groups * shape.codes);
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = vector_paths_allowed() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    static const bool avx512 = avx2 && __builtin_cpu_supports("avx512bw");
    static const bool gfni = avx512 && __builtin_cpu_supports("avx512bitalg") && __builtin_cpu_supports("gfni");
    if (gfni && shape.length % 32 == 0 && (shape.codes == 16 || shape.codes == 32)) {
        const auto count_pieces = shape.codes == 16 ? count_pieces_gfni<16> : count_pieces_gfni<32>;
        if (shape.length == 32) return count_pieces(g.code.data(), g.groups, g.count.data());
        std::vector<uint8_t>& piece = thread_scratch<std::vector<uint8_t>>([] {});
        piece.resize(g.groups * shape.length / 32 * shape.codes);
        count_pieces(g.code.data(), g.groups * shape.length / 32, piece.data());
        return add_pieces(piece.data(), g.groups, shape.length / 32, shape.codes, g.count.data());
    }
    if (avx512 && shape.length == 32 && shape.codes == 16) {
        count_pairs_avx512(g.code.data(), g.groups, g.count.data());
        if (g.groups % 2 != 0) count_codes_avx2<16>(g.code.data() + (g.groups - 1) * 32, 1, 32, g.count.data() + (g.groups - 1) * 16);
        return;
    }
    if (avx2 && shape.length % 32 == 0 && shape.codes == 16) {
        count_codes_avx2<16>(g.code.data(), g.groups, shape.length, g.count.data());
        return;
    }
    if (avx2 && shape.length % 32 == 0 && shape.codes == 32) {
        count_codes_avx2<32>(g.code.data(), g.groups, shape.length, g.count.data());
        return;
    }
#endif
    count_codes_plainly(g.code.data(), g.groups, shape.length, shape.codes, g.count.data());
}

// The values of each group's least and greatest code; nullopt when one is NaN or infinite.
MLENS_VECTOR_LOOP std::optional<ValueBounds> chunk_range(const CodeGroups& shape, const GroupChunk& g) {
    float lo = INFINITY, hi = -INFINITY;
    bool finite = true;
    for (uint64_t i = 0; i < g.groups; ++i) {
        const uint8_t* code = g.code.data() + i * shape.length;
        uint8_t least = 255, greatest = 0;
        for (uint32_t j = 0; j < shape.length; ++j) {
            least = std::min(least, code[j]);
            greatest = std::max(greatest, code[j]);
        }
        const float a = g.value[i * shape.codes + least], b = g.value[i * shape.codes + greatest];
        finite = finite && finite_bits(a) && finite_bits(b);
        lo = std::min(lo, std::min(a, b));
        hi = std::max(hi, std::max(a, b));
    }
    if (!finite || g.groups == 0) return std::nullopt;
    return ValueBounds{lo, hi};
}

// Entries (one code of one group: its value and count) tallied at a time: their slots, values
// and weights stay in L1 between the loops over them.
constexpr uint64_t kTallyBatch = 2048;

// Adds n <= kTallyBatch (value, count) entries, each value taken `count` times, to `sums` (power
// sums about `centre`) and writes each value's slot; a value counted 0 times adds nothing (it may
// be infinite: a code no group uses). Counts and their sums (below 2^24) are exact in float;
// each loop keeps to one width so that it vectorizes. Power sums about the middle of the
// source's range: every |x - centre| is at most half of it, so little cancels.
MLENS_VECTOR_LOOP void tally_batch(const float* value, const uint8_t* count, uint64_t n, const BinSlots& bin, double centre, CentredSums& sums,
                                   uint32_t* slot) {
    float kept[kTallyBatch], times[kTallyBatch];
    float lo = INFINITY, hi = -INFINITY, total = 0, z = 0;
    const auto infinity = std::bit_cast<uint32_t>(INFINITY);
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : total, z)
    for (uint64_t i = 0; i < n; ++i) {
        // Selects on bits, so that the loop has no branch.
        const uint32_t present = 0u - static_cast<uint32_t>(count[i] != 0);
        const uint32_t bits = std::bit_cast<uint32_t>(value[i]) & present;
        const float v = std::bit_cast<float>(bits), k = static_cast<float>(count[i]);
        const float low = std::bit_cast<float>(bits | (infinity & ~present));
        const float high = std::bit_cast<float>(bits | ((infinity | 0x80000000u) & ~present));
        slot[i] = bin(value[i]);
        kept[i] = v;
        times[i] = k;
        total += k;
        z += v == 0.0f ? k : 0.0f;
        lo = low < lo ? low : lo;
        hi = high > hi ? high : hi;
    }
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, a = 0;
#pragma omp simd reduction(+ : s1, s2, s3, s4, a)
    for (uint64_t i = 0; i < n; ++i) {
        const double k = times[i], v = kept[i], d = v - centre, kd = k * d, kd2 = kd * d;
        a += k * std::fabs(v);
        s1 += kd;
        s2 += kd2;
        s3 += kd2 * d;
        s4 += kd2 * d * d;
    }
    sums.add({total, z, a, s1, s2, s3, s4, lo, hi});
}

#if defined(__x86_64__) && defined(__GNUC__)
// Entries the AVX-512 pass packs into its tile (slots, counts and values) before it sums and
// counts them: the tile is taken once it holds this many or more (at most 15 more).
constexpr uint64_t kCountTile = 1024;

// tally_batch and the bin counts with AVX-512, 16 entries (all or half of a group's codes) per
// vector: their values binned with bin_in_range16 (the pass compares its extremes with the range
// it was given). The present entries (a code the group uses) of each vector are packed into a
// tile, their slots, counts and values; once it is full, one loop over the tile sums their powers
// in double with fused multiply-adds, 16 entries a vector, and adds their counts to their slots
// one at a time, in turn to four copies of the counters (`copies`: 4 * slots, zero on entry), so
// that a group's runs of codes in one slot do not wait on each other's additions. An entry no
// group uses costs neither (on Gaussian weights, a fifth of a 4-bit group's 16 codes and two
// fifths of a 5-bit group's 32). Kept in registers instead, the compiler takes each lane out with
// a vector extract before its increment, which costs four times as much on AMD's Zen 4 (measured:
// 14.5 against 3.5 ms per 8M Q4_K values, one core). Every entry summed and counted to one copy
// instead: on Intel's Sapphire Rapids, one core, 4M Gaussian values, runs taken in turn, 3.49
// against 3.13 ms (Q4_0), 3.29 against 3.10 (Q4_K), 6.57 against 5.56 (Q5_0). Keeping the range
// of slots counted (to add and clear only those) cost more than it saved.
MLENS_AVX512_TARGET void tally_groups_avx512(const float* value, const uint8_t* count, uint64_t sixteens, const BinSlots& bin,
                                             double centre, CentredSums& sums, uint32_t slots, uint32_t* copies, uint32_t* slot_counts) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512d middle = _mm512_set1_pd(centre);
    const __m512d magnitude = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY), total = zero, zeros = zero;
    // Power sums in two sets, one for each half of a vector, so that each sum's chain of
    // dependent adds is half as long (bound by its latency, it would hold the rest back).
    __m512d s1[2], s2[2], s3[2], s4[2], a[2];
    for (int h = 0; h < 2; ++h) s1[h] = s2[h] = s3[h] = s4[h] = a[h] = _mm512_setzero_pd();
    // The tile, with room for one more vector past kCountTile and the zeros that pad its last.
    alignas(64) uint32_t slot[kCountTile + 32], times[kCountTile + 32];
    alignas(64) float kept[kCountTile + 32];
    uint64_t held = 0;
    uint32_t* const c0 = copies;
    uint32_t* const c1 = c0 + slots;
    uint32_t* const c2 = c1 + slots;
    uint32_t* const c3 = c2 + slots;
    auto count_tile = [&]() MLENS_AVX512_TARGET {
        // Past the last entry, entries counted 0 times (of value 0: they add nothing).
        _mm512_storeu_si512(times + held, _mm512_setzero_si512());
        _mm512_storeu_ps(kept + held, zero);
        for (uint64_t i = 0; i < held; i += 16) {
            for (int half = 0; half < 2; ++half) {
                const __m512d xd = _mm512_cvtps_pd(_mm256_load_ps(kept + i + 8 * half));
                const __m512d kd = _mm512_cvtepi32_pd(_mm256_load_si256(reinterpret_cast<const __m256i*>(times + i + 8 * half)));
                const __m512d d = _mm512_sub_pd(xd, middle), w = _mm512_mul_pd(kd, d), w2 = _mm512_mul_pd(w, d);
                a[half] = _mm512_fmadd_pd(kd, _mm512_and_pd(xd, magnitude), a[half]);
                s1[half] = _mm512_add_pd(s1[half], w);
                s2[half] = _mm512_add_pd(s2[half], w2);
                s3[half] = _mm512_fmadd_pd(w2, d, s3[half]);
                s4[half] = _mm512_fmadd_pd(_mm512_mul_pd(w2, d), d, s4[half]);
            }
            const uint64_t end = std::min(held, i + 16);
            uint64_t j = i;
            for (; j + 4 <= end; j += 4) {
                c0[slot[j]] += times[j];
                c1[slot[j + 1]] += times[j + 1];
                c2[slot[j + 2]] += times[j + 2];
                c3[slot[j + 3]] += times[j + 3];
            }
            for (; j < end; ++j) c0[slot[j]] += times[j];
        }
        held = 0;
    };
    for (uint64_t g = 0; g < sixteens; ++g) {
        const __m512 x = _mm512_loadu_ps(value + 16 * g);
        const __m512i k = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(count + 16 * g)));
        const __mmask16 present = _mm512_test_epi32_mask(k, k);
        _mm512_storeu_si512(slot + held, _mm512_maskz_compress_epi32(present, bin_in_range16(x, bin)));
        _mm512_storeu_si512(times + held, _mm512_maskz_compress_epi32(present, k));
        _mm512_storeu_ps(kept + held, _mm512_maskz_compress_ps(present, x));
        held += static_cast<uint64_t>(__builtin_popcount(present));
        const __m512 kf = _mm512_cvtepi32_ps(k);
        total = _mm512_add_ps(total, kf);
        zeros = _mm512_mask_add_ps(zeros, _mm512_mask_cmp_ps_mask(present, x, zero, _CMP_EQ_OQ), zeros, kf);
        lo = _mm512_mask_min_ps(lo, present, lo, x);
        hi = _mm512_mask_max_ps(hi, present, hi, x);
        if (held >= kCountTile) count_tile();
    }
    count_tile();
    for (uint32_t i = 0; i < slots; ++i) slot_counts[i] += c0[i] + c1[i] + c2[i] + c3[i];
    sums.add({_mm512_reduce_add_ps(total), _mm512_reduce_add_ps(zeros), _mm512_reduce_add_pd(_mm512_add_pd(a[0], a[1])),
              _mm512_reduce_add_pd(_mm512_add_pd(s1[0], s1[1])), _mm512_reduce_add_pd(_mm512_add_pd(s2[0], s2[1])),
              _mm512_reduce_add_pd(_mm512_add_pd(s3[0], s3[1])), _mm512_reduce_add_pd(_mm512_add_pd(s4[0], s4[1])),
              _mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi)});
}
#endif

}  // namespace

Result<std::optional<ValueBounds>> code_group_range(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                    double progress_to) {
    const CodeGroups shape = src.code_groups();
    ValueBounds range{INFINITY, -INFINITY};
    bool complete = true;
    std::mutex m;
    Status s = for_each_group_chunk(src, job, threads, progress_from, progress_to, [&](GroupChunk& g) {
        const std::optional<ValueBounds> r = chunk_range(shape, g);
        std::lock_guard lock(m);
        if (!r)
            complete = false;
        else
            range = {std::min(range.min, r->min), std::max(range.max, r->max)};
    });
    if (!s) return s.error();
    if (!complete || src.size() == 0) return std::optional<ValueBounds>{};
    return std::optional<ValueBounds>{range};
}

Status summarize_code_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                             double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total) {
    const CodeGroups shape = src.code_groups();
    total.assign(binning.slots(), 0);
    PassTotals totals(total);
    const BinSlots bin(binning);
    const double centre = (binning.lo + binning.hi) / 2;
    Status run = for_each_group_chunk(src, job, threads, progress_from, progress_to, [&](GroupChunk& g) {
        std::vector<uint32_t>& local = thread_scratch<std::vector<uint32_t>>([] {});
        count_group_codes(shape, g);
        local.assign(binning.slots(), 0);
        uint32_t* counts = local.data();
        CentredSums sums;
#if defined(__x86_64__) && defined(__GNUC__)
        if (avx512_paths_allowed() && shape.codes % 16 == 0) {
            std::vector<uint32_t>& copies = thread_scratch<std::vector<uint32_t>>([] {});
            copies.assign(4 * static_cast<size_t>(binning.slots()), 0);
            tally_groups_avx512(g.value.data(), g.count.data(), g.groups * shape.codes / 16, bin, centre, sums, binning.slots(),
                                copies.data(), counts);
            totals.hand_in(g.first, sums.summary(centre), local);
            return;
        }
#endif
        uint32_t slot[kTallyBatch];
        const uint64_t n = g.groups * shape.codes;
        for (uint64_t at = 0; at < n; at += kTallyBatch) {
            const uint64_t len = std::min(kTallyBatch, n - at);
            const uint8_t* times = g.count.data() + at;
            tally_batch(g.value.data() + at, times, len, bin, centre, sums, slot);
            for (uint64_t i = 0; i < len; ++i) counts[slot[i]] += times[i];
        }
        totals.hand_in(g.first, sums.summary(centre), local);
    });
    totals.merge_into(all);
    return run;
}

}  // namespace mlens
