#include "mlens/quant/stats.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <mutex>

#include "mlens/util/parallel.h"

namespace mlens {

namespace {

// Values decoded per chunk: a chunk and its bin indices stay in L2 between the passes over it.
constexpr uint64_t kChunkTarget = 1u << 16;
constexpr uint32_t kPercentileBins = 4096;

// The vector loops also get an AVX2 variant, chosen when the program loads on a CPU that has it.
#if defined(__x86_64__) && defined(__GNUC__)
#define MLENS_VECTOR_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define MLENS_VECTOR_LOOP
#endif

bool non_finite(float x) { return (std::bit_cast<uint32_t>(x) & 0x7f800000u) == 0x7f800000u; }

// A chunk's values with NaN and ±Inf moved out (counted), so the loops below see finite values only.
struct FiniteValues {
    const float* values = nullptr;
    uint64_t count = 0, nan = 0, inf = 0;
};

FiniteValues finite_values(const float* v, uint64_t n, std::vector<float>& scratch) {
    uint32_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) bad |= non_finite(v[i]);
    if (!bad) return {v, n, 0, 0};
    FiniteValues f;
    scratch.clear();
    for (uint64_t i = 0; i < n; ++i) {
        if (std::isnan(v[i])) ++f.nan;
        else if (std::isinf(v[i])) ++f.inf;
        else scratch.push_back(v[i]);
    }
    f.values = scratch.data();
    f.count = scratch.size();
    return f;
}

// Equal bins over [lo, hi]; bin_slots() maps a value to slot 0 (below lo), 1 + its bin, or
// bins + 1 (above hi). A value's bin is floor((x - lo) * scale), the last bin also holding hi.
struct Binning {
    double lo = 0, hi = 0, scale = 0;
    uint32_t bins = 0;

    static Binning over(double lo, double hi, uint32_t bins) { return {lo, hi, bins / (hi - lo), bins}; }
    uint32_t slots() const { return bins + 2; }

    MLENS_VECTOR_LOOP void bin_slots(const float* v, uint64_t n, uint32_t* slot) const {
        // Locals, so that stores to `slot` cannot alias them and the loop vectorizes.
        const double first = lo, last_value = hi, k = scale, last = bins - 1;
        const int32_t above = static_cast<int32_t>(bins) + 1;
        for (uint64_t i = 0; i < n; ++i) {
            const double x = v[i];
            double t = (x - first) * k;
            t = t > 0 ? t : 0;
            t = t < last ? t : last;
            int32_t s = static_cast<int32_t>(t) + 1;
            s = x < first ? 0 : s;
            s = x > last_value ? above : s;
            slot[i] = static_cast<uint32_t>(s);
        }
    }
};

// Bins of the percentile histogram: floor((x - lo) * scale) in float, for values in [lo, lo +
// kPercentileBins / scale] and a finite float scale (else Binning in double is used). Float
// rounding may put a value next to a bin edge into the neighbouring bin, within the
// percentiles' one-bin accuracy.
MLENS_VECTOR_LOOP void percentile_bins(const float* v, uint64_t n, float lo, float scale, uint32_t* bin) {
    const float last = kPercentileBins - 1;
    for (uint64_t i = 0; i < n; ++i) {
        float t = (v[i] - lo) * scale;
        t = t > 0 ? t : 0;
        t = t < last ? t : last;
        bin[i] = static_cast<uint32_t>(static_cast<int32_t>(t));
    }
}

// Sums of (x - mean)^2 and (x - mean)^4.
MLENS_VECTOR_LOOP std::pair<double, double> central_moments(const float* v, uint64_t n, double mean) {
    double a2 = 0, a4 = 0;
#pragma omp simd reduction(+ : a2, a4)
    for (uint64_t i = 0; i < n; ++i) {
        const double d = v[i] - mean, d2 = d * d;
        a2 += d2;
        a4 += d2 * d2;
    }
    return {a2, a4};
}

// Adds each value's slot to counts (binning.slots() entries).
void count_slots(const Binning& binning, const float* v, uint64_t n, std::vector<uint32_t>& slot, uint32_t* counts) {
    slot.resize(n);
    binning.bin_slots(v, n, slot.data());
    for (uint64_t i = 0; i < n; ++i) ++counts[slot[i]];
}

// Per-chunk counts, added into a histogram under its owner's lock.
void add_counts(const std::vector<uint32_t>& local, Histogram& h) {
    h.below += local.front();
    for (size_t b = 0; b < h.counts.size(); ++b) h.counts[b] += local[b + 1];
    h.above += local.back();
}

struct Moments {
    uint64_t finite = 0, nan = 0, inf = 0, zeros = 0;
    double min = INFINITY, max = -INFINITY, sum = 0, sum_abs = 0;

    void merge(const Moments& o) {
        finite += o.finite; nan += o.nan; inf += o.inf; zeros += o.zeros;
        min = std::min(min, o.min); max = std::max(max, o.max);
        sum += o.sum; sum_abs += o.sum_abs;
    }

    // Adds n finite values, in loops of vector instructions (`omp simd` lets the sums be
    // split across vector lanes).
    void add(const float* v, uint64_t n) {
        finite += n;
        constexpr uint64_t kBlock = 1u << 20;  // keeps the 32-bit zero counts from overflowing
        for (uint64_t at = 0; at < n; at += kBlock) add_block(v + at, std::min(kBlock, n - at));
    }

    MLENS_VECTOR_LOOP void add_block(const float* v, uint64_t n) {
        double s = 0, a = 0;
        float lo = INFINITY, hi = -INFINITY;
        uint32_t z = 0;
#pragma omp simd reduction(+ : s, a)
        for (uint64_t i = 0; i < n; ++i) {
            const double x = v[i];
            s += x;
            a += std::fabs(x);
        }
#pragma omp simd reduction(+ : z) reduction(min : lo) reduction(max : hi)
        for (uint64_t i = 0; i < n; ++i) {
            const float x = v[i];
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            z += x == 0.0f;
        }
        sum += s;
        sum_abs += a;
        min = std::min<double>(min, lo);
        max = std::max<double>(max, hi);
        zeros += z;
    }
};

// Runs fn(values, count) over the source in chunks, on `threads` threads.
Status for_each_chunk(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                      double progress_to, const std::function<void(const float*, uint64_t)>& fn) {
    const uint64_t chunk = src.chunk_length(kChunkTarget);
    const uint64_t n_chunks = (src.size() + chunk - 1) / chunk;
    std::atomic<uint64_t> done{0};
    std::mutex error_mutex;
    std::optional<Error> error;
    parallel_for(n_chunks, threads, [&](uint64_t c) {
        if (job_cancelled(job)) return false;
        thread_local std::vector<float> values;
        uint64_t first = c * chunk, count = std::min(chunk, src.size() - first);
        values.resize(count);
        if (Status s = src.read(first, count, values.data()); !s) {
            std::lock_guard lock(error_mutex);
            error = s.error();
            return false;
        }
        fn(values.data(), count);
        uint64_t d = ++done;
        job_report(job, progress_from + (progress_to - progress_from) * static_cast<double>(d) / static_cast<double>(n_chunks));
        return true;
    });
    if (error) return *error;
    if (job_cancelled(job)) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
    return ok_status();
}

// [lo, hi] of a histogram over the data's [min, max]: a constant tensor still gets a visible bin.
Binning data_range_binning(double min, double max, uint32_t bins) {
    const double lo = std::isfinite(min) ? min : 0.0;
    double hi = std::isfinite(max) ? max : 0.0;
    if (!(hi > lo)) hi = lo + 1.0;
    return Binning::over(lo, hi, bins);
}

// compute_stats, plus a histogram over [min, max] when histogram_bins > 0.
Result<StatsAndHistogram> stats_pass(const FloatSource& src, uint32_t histogram_bins, JobContext* job, unsigned threads) {
    StatsAndHistogram out;
    TensorStats& st = out.stats;
    st.count = src.size();
    Moments all;
    std::mutex m;
    Status s = for_each_chunk(src, job, threads, 0.0, 0.4, [&](const float* v, uint64_t n) {
        thread_local std::vector<float> scratch;
        FiniteValues f = finite_values(v, n, scratch);
        Moments local;
        local.nan = f.nan;
        local.inf = f.inf;
        local.add(f.values, f.count);
        std::lock_guard lock(m);
        all.merge(local);
    });
    if (!s) return s.error();
    st.finite = all.finite; st.nan = all.nan; st.inf = all.inf; st.zeros = all.zeros;
    const Binning user = data_range_binning(all.min, all.max, std::max<uint32_t>(histogram_bins, 1));
    out.histogram.lo = user.lo;
    out.histogram.hi = user.hi;
    out.histogram.counts.assign(histogram_bins, 0);
    if (all.finite == 0) return out;
    st.min = all.min;
    st.max = all.max;
    st.mean = all.sum / static_cast<double>(all.finite);
    st.mean_abs = all.sum_abs / static_cast<double>(all.finite);

    // Second pass: central moments (numerically stable), the percentile histogram and the
    // requested one.
    const auto pct_lo = static_cast<float>(st.min);
    const auto pct_scale = st.max > st.min ? static_cast<float>(kPercentileBins / (st.max - st.min)) : 0.0f;
    std::vector<uint64_t> hist(kPercentileBins + 2, 0);  // slots as in Binning
    std::vector<uint64_t> user_total(user.slots(), 0);
    double m2 = 0, m4 = 0;
    s = for_each_chunk(src, job, threads, 0.4, 1.0, [&](const float* v, uint64_t n) {
        thread_local std::vector<float> scratch;
        thread_local std::vector<uint32_t> slot;
        FiniteValues f = finite_values(v, n, scratch);
        const float* x = f.values;
        const auto [a2, a4] = central_moments(x, f.count, st.mean);
        std::vector<uint32_t> local(kPercentileBins + 2, 0);
        if (std::isfinite(pct_scale)) {
            slot.resize(f.count);
            percentile_bins(x, f.count, pct_lo, pct_scale, slot.data());
            for (uint64_t i = 0; i < f.count; ++i) ++local[slot[i] + 1];
        } else {
            count_slots(Binning::over(st.min, st.max, kPercentileBins), x, f.count, slot, local.data());
        }
        std::vector<uint32_t> local_user(histogram_bins ? user.slots() : 0, 0);
        if (histogram_bins) count_slots(user, f.values, f.count, slot, local_user.data());
        std::lock_guard lock(m);
        m2 += a2;
        m4 += a4;
        for (size_t b = 0; b < local.size(); ++b) hist[b] += local[b];
        for (size_t b = 0; b < local_user.size(); ++b) user_total[b] += local_user[b];
    });
    if (!s) return s.error();
    if (histogram_bins) std::copy(user_total.begin() + 1, user_total.end() - 1, out.histogram.counts.begin());
    const double n = static_cast<double>(all.finite);
    double var = m2 / n;
    st.std = std::sqrt(var);
    st.kurtosis = var > 0 ? (m4 / n) / (var * var) - 3.0 : 0.0;
    const double width = (st.max - st.min) / kPercentileBins;
    for (size_t p = 0; p < TensorStats::kPercentiles.size(); ++p) {
        // Value at the middle of the bin holding the requested rank.
        auto rank = static_cast<uint64_t>(std::ceil(TensorStats::kPercentiles[p] / 100.0 * n));
        uint64_t seen = 0;
        uint32_t b = 0;
        for (; b < kPercentileBins; ++b) {
            seen += hist[b + 1];
            if (seen >= std::max<uint64_t>(rank, 1)) break;
        }
        st.percentiles[p] = std::min(st.max, st.min + (std::min<uint32_t>(b, kPercentileBins - 1) + 0.5) * width);
    }
    return out;
}

}  // namespace

uint64_t Histogram::total() const {
    uint64_t t = below + above;
    for (uint64_t c : counts) t += c;
    return t;
}

Result<Histogram> compute_histogram(const FloatSource& src, uint32_t bins, std::optional<std::pair<double, double>> range,
                                    JobContext* job, unsigned threads) {
    if (bins == 0) return Error{"E_RANGE", "bins", std::nullopt, "at least one bin is needed"};
    Binning binning;
    std::mutex m;
    if (range) {
        double hi = range->second;
        if (!(hi > range->first)) hi = range->first + 1.0;
        binning = Binning::over(range->first, hi, bins);
    } else {
        Moments all;
        Status s = for_each_chunk(src, job, threads, 0.0, 0.5, [&](const float* v, uint64_t n) {
            float lo = INFINITY, hi = -INFINITY;
            for (uint64_t i = 0; i < n; ++i) {
                const float x = non_finite(v[i]) ? lo : v[i];
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            }
            std::lock_guard lock(m);
            all.min = std::min<double>(all.min, lo);
            all.max = std::max<double>(all.max, hi);
        });
        if (!s) return s.error();
        binning = data_range_binning(all.min, all.max, bins);
    }
    Histogram h;
    h.lo = binning.lo;
    h.hi = binning.hi;
    h.counts.assign(bins, 0);
    Status s = for_each_chunk(src, job, threads, range ? 0.0 : 0.5, 1.0, [&](const float* v, uint64_t n) {
        thread_local std::vector<float> scratch;
        thread_local std::vector<uint32_t> slot;
        FiniteValues f = finite_values(v, n, scratch);
        std::vector<uint32_t> local(binning.slots(), 0);
        count_slots(binning, f.values, f.count, slot, local.data());
        std::lock_guard lock(m);
        add_counts(local, h);
    });
    if (!s) return s.error();
    return h;
}

Result<TensorStats> compute_stats(const FloatSource& source, JobContext* job, unsigned threads) {
    Result<StatsAndHistogram> r = stats_pass(source, 0, job, threads);
    if (!r) return r.error();
    return r->stats;
}

Result<StatsAndHistogram> compute_stats_and_histogram(const FloatSource& source, uint32_t bins, JobContext* job,
                                                      unsigned threads) {
    if (bins == 0) return Error{"E_RANGE", "bins", std::nullopt, "at least one bin is needed"};
    return stats_pass(source, bins, job, threads);
}

}  // namespace mlens
