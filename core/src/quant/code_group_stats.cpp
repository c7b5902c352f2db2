#include "code_group_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "mlens/util/parallel_job.h"
#include "util/finite_floats.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values per chunk: a chunk's codes, code values, counts and slots stay in L2 together.
constexpr uint64_t kChunkTarget = 1u << 16;

// One chunk of groups, in per-thread buffers: codes (`length` per group), code values and their
// counts (`codes` per group).
struct GroupChunk {
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
                            thread_local GroupChunk g;
                            const uint64_t first = c * chunk, count = std::min(chunk, total - first);
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
#endif

void count_group_codes(const CodeGroups& shape, GroupChunk& g) {
    g.count.resize(g.groups * shape.codes);
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    static const bool avx512 = avx2 && __builtin_cpu_supports("avx512bw");
    if (avx512 && shape.length == 32 && shape.codes == 16) {
        count_pairs_avx512(g.code.data(), g.groups, g.count.data());
        if (g.groups % 2 != 0) count_codes_avx2<16>(g.code.data() + (g.groups - 1) * 32, 1, 32, g.count.data() + (g.groups - 1) * 16);
        return;
    }
    if (avx2 && shape.length % 32 == 0 && shape.codes == 16) {
        count_codes_avx2<16>(g.code.data(), g.groups, shape.length, g.count.data());
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

// The figures of n (value, count) pairs, taken `count` times each; a value counted 0 times is
// left out (it may be infinite: a code no group uses). Counts and their sums (below 2^24) are
// exact in float; each loop keeps to one width so that it vectorizes.
MLENS_VECTOR_LOOP ValueSummary<double> weighted_summary(const float* value, const uint8_t* count, uint64_t n) {
    thread_local std::vector<float> kept, times;
    kept.resize(n);
    times.resize(n);
    float* x = kept.data();
    float* w = times.data();
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
        x[i] = v;
        w[i] = k;
        total += k;
        z += v == 0.0f ? k : 0.0f;
        lo = low < lo ? low : lo;
        hi = high > hi ? high : hi;
    }
    ValueSummary<double> out;
    if (total == 0) return out;
    // Power sums about the middle of the chunk's range in one pass, then moved to the mean: every
    // |x - c| is at most half the range, so little cancels (a constant chunk's sums are all 0).
    const double c = (static_cast<double>(lo) + static_cast<double>(hi)) / 2;
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, a = 0;
#pragma omp simd reduction(+ : s1, s2, s3, s4, a)
    for (uint64_t i = 0; i < n; ++i) {
        const double k = w[i], v = x[i], d = v - c, kd = k * d, kd2 = kd * d;
        a += k * std::fabs(v);
        s1 += kd;
        s2 += kd2;
        s3 += kd2 * d;
        s4 += kd2 * d * d;
    }
    const double shift = s1 / static_cast<double>(total), mean = c + shift;
    const double m2 = s2 - s1 * shift;
    const double m3 = s3 - 3 * shift * s2 + 2 * shift * shift * s1;
    const double m4 = s4 - 4 * shift * s3 + 6 * shift * shift * s2 - 3 * shift * shift * shift * s1;
    out.zeros = static_cast<uint64_t>(z);
    out.min = lo;
    out.max = hi;
    out.sum_abs = a;
    out.moments.merge({static_cast<uint64_t>(total), mean, m2, m3, m4});
    return out;
}

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
    std::mutex m;
    return for_each_group_chunk(src, job, threads, progress_from, progress_to, [&](GroupChunk& g) {
        thread_local std::vector<uint32_t> slot, local;
        count_group_codes(shape, g);
        const uint64_t n = g.groups * shape.codes;
        const ValueSummary<double> summary = weighted_summary(g.value.data(), g.count.data(), n);
        slot.resize(n);
        binning.bin_slots(g.value.data(), n, slot.data());
        local.assign(binning.slots(), 0);
        for (uint64_t i = 0; i < n; ++i) local[slot[i]] += g.count[i];
        std::lock_guard lock(m);
        all.merge(summary);
        for (size_t i = 0; i < local.size(); ++i) total[i] += local[i];
    });
}

}  // namespace mlens
