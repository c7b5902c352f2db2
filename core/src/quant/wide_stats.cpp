#include "wide_stats.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "mlens/util/parallel_job.h"
#include "util/ordered_parts.h"
#include "util/thread_scratch.h"
#include "value_summary.h"

namespace mlens {

namespace {

constexpr uint64_t kChunkTarget = 1u << 16;

// What one pass learns of a set of wide values.
struct WideSummary : ValueSummary<long double> {
    WideInteger integer_sum = 0;  // integer sources: the exact sum of every value

    void merge(const WideSummary& o) {
        ValueSummary::merge(o);
        integer_sum += o.integer_sum;
    }
};

WideSummary summarize(const long double* v, uint64_t n, bool integer) {
    WideSummary out;
    uint64_t finite = 0;
    long double sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const long double x = v[i];
        if (std::isnan(x)) {
            ++out.nan;
            continue;
        }
        if (std::isinf(x)) {
            ++out.inf;
            out.neg_inf += x < 0;
            continue;
        }
        ++finite;
        out.min = std::min(out.min, x);
        out.max = std::max(out.max, x);
        out.zeros += x == 0;
        out.sum_abs += std::fabs(x);
        if (integer)
            out.integer_sum += static_cast<WideInteger>(x);
        else
            sum += x;
    }
    if (finite == 0) return out;
    const long double count = static_cast<long double>(finite);
    const long double mean = integer ? static_cast<long double>(out.integer_sum) / count : sum / count;
    CentralMoments<long double>& mo = out.moments;
    mo.n = finite;
    mo.mean = mean;
    for (uint64_t i = 0; i < n; ++i) {
        if (!std::isfinite(v[i])) continue;
        const long double d = v[i] - mean, d2 = d * d;
        mo.m2 += d2;
        mo.m3 += d2 * d;
        mo.m4 += d2 * d2;
    }
    return out;
}

}  // namespace

Status apply_wide_figures(const FloatSource& src, TensorStats& st, JobContext* job, unsigned threads) {
    const bool integer = src.wide_kind() == WideKind::integer;
    const uint64_t chunk = src.chunk_length(kChunkTarget);
    WideSummary all;
    OrderedParts<WideSummary> parts;
    Status run = parallel_job((src.size() + chunk - 1) / chunk, threads, job, [&](uint64_t c) -> Status {
        const uint64_t first = c * chunk, count = std::min(chunk, src.size() - first);
        std::vector<long double>& values = thread_scratch<std::vector<long double>>([] {});
        values.resize(count);
        if (Status s = src.read_wide(first, count, values.data()); !s) return s;
        parts.put(first, summarize(values.data(), count, integer));
        return ok_status();
    });
    if (!run) return run;
    parts.merge_into(all);
    const CentralMoments<long double>& mo = all.moments;
    st.finite = mo.n;
    st.nan = all.nan;
    st.pos_inf = all.inf - all.neg_inf;
    st.neg_inf = all.neg_inf;
    st.inf = all.inf;
    st.zeros = all.zeros;
    st.integer_extremes.reset();
    if (mo.n == 0) {
        st.min = st.max = st.mean = st.std = st.mean_abs = st.kurtosis = st.percentile_within = NAN;
        st.percentiles.fill(NAN);
        return ok_status();
    }
    const long double n = static_cast<long double>(mo.n);
    if (integer) st.integer_extremes = IntegerExtremes{static_cast<WideInteger>(all.min), static_cast<WideInteger>(all.max)};
    st.min = static_cast<double>(all.min) + 0.0;  // a zero extreme is +0 (stats.cpp)
    st.max = static_cast<double>(all.max) + 0.0;
    st.mean = static_cast<double>(integer ? static_cast<long double>(all.integer_sum) / n : mo.mean);
    st.mean_abs = static_cast<double>(all.sum_abs / n);
    const long double var = mo.m2 / n;
    st.std = static_cast<double>(std::sqrt(var));
    st.kurtosis = var > 0 ? static_cast<double>((mo.m4 / n) / (var * var) - 3) : 0.0;
    for (double& p : st.percentiles) p = std::isnan(p) ? p : std::clamp(p, st.min, st.max);
    return ok_status();
}

}  // namespace mlens
