#include "mlens/quant/stats.h"

#include <cmath>
#include <mutex>

#include "mlens/util/parallel.h"

namespace mlens {

namespace {

struct Moments {
    uint64_t finite = 0, nan = 0, inf = 0, zeros = 0;
    double min = INFINITY, max = -INFINITY, sum = 0, sum_abs = 0;

    void merge(const Moments& o) {
        finite += o.finite; nan += o.nan; inf += o.inf; zeros += o.zeros;
        min = std::min(min, o.min); max = std::max(max, o.max);
        sum += o.sum; sum_abs += o.sum_abs;
    }
};

// Runs fn(chunk values, count, first) over the source in chunks, on `threads` threads.
Status for_each_chunk(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                      double progress_to, const std::function<void(const float*, uint64_t, uint64_t)>& fn) {
    const uint64_t chunk = src.chunk_length();
    const uint64_t n_chunks = (src.size() + chunk - 1) / chunk;
    std::atomic<uint64_t> done{0};
    std::mutex error_mutex;
    std::optional<Error> error;
    parallel_for(n_chunks, threads, [&](uint64_t c) {
        if (job_cancelled(job)) return false;
        uint64_t first = c * chunk, count = std::min(chunk, src.size() - first);
        std::vector<float> values(count);
        if (Status s = src.read(first, count, values.data()); !s) {
            std::lock_guard lock(error_mutex);
            error = s.error();
            return false;
        }
        fn(values.data(), count, first);
        uint64_t d = ++done;
        job_report(job, progress_from + (progress_to - progress_from) * static_cast<double>(d) / static_cast<double>(n_chunks));
        return true;
    });
    if (error) return *error;
    if (job_cancelled(job)) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
    return ok_status();
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
    Histogram h;
    if (range) {
        h.lo = range->first;
        h.hi = range->second;
    } else {
        std::mutex m;
        Moments all;
        Status s = for_each_chunk(src, job, threads, 0.0, 0.5, [&](const float* v, uint64_t n, uint64_t) {
            Moments local;
            for (uint64_t i = 0; i < n; ++i)
                if (std::isfinite(v[i])) { local.min = std::min<double>(local.min, v[i]); local.max = std::max<double>(local.max, v[i]); }
            std::lock_guard lock(m);
            all.merge(local);
        });
        if (!s) return s.error();
        h.lo = std::isfinite(all.min) ? all.min : 0.0;
        h.hi = std::isfinite(all.max) ? all.max : 0.0;
    }
    if (!(h.hi > h.lo)) h.hi = h.lo + 1.0;  // a constant tensor still gets a visible bin
    h.counts.assign(bins, 0);
    std::mutex m;
    const double scale = bins / (h.hi - h.lo);
    Status s = for_each_chunk(src, job, threads, range ? 0.0 : 0.5, 1.0, [&](const float* v, uint64_t n, uint64_t) {
        std::vector<uint64_t> local(bins, 0);
        uint64_t below = 0, above = 0;
        for (uint64_t i = 0; i < n; ++i) {
            double x = v[i];
            if (!std::isfinite(x)) continue;
            if (x < h.lo) { ++below; continue; }
            if (x > h.hi) { ++above; continue; }
            auto b = static_cast<uint64_t>((x - h.lo) * scale);
            ++local[std::min<uint64_t>(b, bins - 1)];
        }
        std::lock_guard lock(m);
        for (uint32_t b = 0; b < bins; ++b) h.counts[b] += local[b];
        h.below += below;
        h.above += above;
    });
    if (!s) return s.error();
    return h;
}

Result<TensorStats> compute_stats(const FloatSource& src, JobContext* job, unsigned threads) {
    TensorStats st;
    st.count = src.size();
    Moments all;
    std::mutex m;
    Status s = for_each_chunk(src, job, threads, 0.0, 0.4, [&](const float* v, uint64_t n, uint64_t) {
        Moments local;
        for (uint64_t i = 0; i < n; ++i) {
            double x = v[i];
            if (std::isnan(x)) { ++local.nan; continue; }
            if (std::isinf(x)) { ++local.inf; continue; }
            ++local.finite;
            local.zeros += x == 0.0;
            local.min = std::min(local.min, x);
            local.max = std::max(local.max, x);
            local.sum += x;
            local.sum_abs += std::fabs(x);
        }
        std::lock_guard lock(m);
        all.merge(local);
    });
    if (!s) return s.error();
    st.finite = all.finite; st.nan = all.nan; st.inf = all.inf; st.zeros = all.zeros;
    if (all.finite == 0) return st;
    st.min = all.min;
    st.max = all.max;
    st.mean = all.sum / static_cast<double>(all.finite);
    st.mean_abs = all.sum_abs / static_cast<double>(all.finite);

    // Second pass: central moments (numerically stable) and the percentile histogram.
    constexpr uint32_t kBins = 4096;
    const double lo = st.min, width = (st.max - st.min) / kBins;
    std::vector<uint64_t> hist(kBins, 0);
    double m2 = 0, m4 = 0;
    s = for_each_chunk(src, job, threads, 0.4, 1.0, [&](const float* v, uint64_t n, uint64_t) {
        std::vector<uint64_t> local(kBins, 0);
        double a2 = 0, a4 = 0;
        for (uint64_t i = 0; i < n; ++i) {
            double x = v[i];
            if (!std::isfinite(x)) continue;
            double d = x - st.mean, d2 = d * d;
            a2 += d2;
            a4 += d2 * d2;
            uint64_t b = width > 0 ? static_cast<uint64_t>((x - lo) / width) : 0;
            ++local[std::min<uint64_t>(b, kBins - 1)];
        }
        std::lock_guard lock(m);
        m2 += a2;
        m4 += a4;
        for (uint32_t b = 0; b < kBins; ++b) hist[b] += local[b];
    });
    if (!s) return s.error();
    const double n = static_cast<double>(all.finite);
    double var = m2 / n;
    st.std = std::sqrt(var);
    st.kurtosis = var > 0 ? (m4 / n) / (var * var) - 3.0 : 0.0;
    for (size_t p = 0; p < TensorStats::kPercentiles.size(); ++p) {
        // Value at the middle of the bin holding the requested rank.
        auto rank = static_cast<uint64_t>(std::ceil(TensorStats::kPercentiles[p] / 100.0 * n));
        uint64_t seen = 0;
        uint32_t b = 0;
        for (; b < kBins; ++b) {
            seen += hist[b];
            if (seen >= std::max<uint64_t>(rank, 1)) break;
        }
        st.percentiles[p] = std::min(st.max, lo + (std::min<uint32_t>(b, kBins - 1) + 0.5) * width);
    }
    return st;
}

}  // namespace mlens
