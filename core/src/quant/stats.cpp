#include "mlens/quant/stats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>

#include "binning.h"
#include "code_group_stats.h"
#include "mlens/util/parallel_job.h"
#include "pass_totals.h"
#include "scaled_group_stats.h"
#include "slot_copies.h"
#include "step_table_stats.h"
#include "util/finite_floats.h"
#include "util/ordered_parts.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"
#include "value_summary.h"
#include "wide_stats.h"

namespace mlens {

// Here, where the vector loops of statistics are compiled with their options (core/CMakeLists.txt).
MLENS_VECTOR_LOOP void Binning::bin_slots(const float* v, uint64_t n, uint32_t* slot) const {
    if (!settles_in_one) {
        const float lowest = float_at_least(lo), highest = float_at_most(hi);
        for (uint64_t i = 0; i < n; ++i) slot[i] = v[i] < lowest ? 0 : v[i] > highest ? bins + 1 : searched_bin(v[i]) + 1;
        return;
    }
    // A local copy, so that stores to `slot` cannot alias it and the loop vectorizes.
    const BinSlots bin(*this);
    for (uint64_t i = 0; i < n; ++i) slot[i] = bin(v[i]);
}

namespace {

// Values decoded per chunk: a chunk and its bin indices stay in L2 between the loops over it.
constexpr uint64_t kChunkTarget = 1u << 16;
// Values per chunk when counting stored codes, between these two: each chunk clears and adds up
// a table of every code, so chunks are large, yet there are at least two per thread.
constexpr uint64_t kCodeChunkMin = 1u << 20, kCodeChunkMax = 1u << 22;
// Percentiles are read from a histogram of at least this many bins over [min, max].
constexpr uint32_t kPercentileBins = 4096;
// Values per quick_range request (a Q8_0 chunk's bytes, read into a per-thread buffer, stay in
// L2 while its range is found), and the share of a job's progress that finding the range takes.
constexpr uint64_t kRangeChunk = 1u << 17;
constexpr double kRangeProgress = 0.1;
// The share of a job's progress that counting step tables takes (step_table_stats.h): the tables'
// bins and sums take the rest. A source whose tables give way starts its route's progress anew,
// most often at its first chunk.
constexpr double kTablesProgress = 0.9;

// A chunk's values with NaN and ±Inf moved out (counted), so the loops below see finite values only.
struct FiniteValues {
    const float* values = nullptr;
    uint64_t count = 0, nan = 0, inf = 0, neg_inf = 0;
};

// The finite values of a chunk that has a NaN or an infinity.
FiniteValues only_finite(const float* v, uint64_t n, std::vector<float>& scratch) {
    FiniteValues f;
    scratch.clear();
    for (uint64_t i = 0; i < n; ++i) {
        if (std::isnan(v[i]))
            ++f.nan;
        else if (std::isinf(v[i])) {
            ++f.inf;
            f.neg_inf += v[i] < 0;
        } else {
            scratch.push_back(v[i]);
        }
    }
    f.values = scratch.data();
    f.count = scratch.size();
    return f;
}

FiniteValues finite_values(const float* v, uint64_t n, std::vector<float>& scratch) {
    if (all_finite(v, n)) return {v, n, 0, 0, 0};
    return only_finite(v, n, scratch);
}

// Values binned at a time: a tile's slots stay in L1 between binning and counting.
constexpr uint64_t kCountTile = 2048;
// Adds each value's slot to counts (binning.slots() entries), through interleaved copies
// (slot_copies.h).
void count_slots(const Binning& binning, const float* v, uint64_t n, uint32_t* counts) {
    std::vector<uint32_t>& slot = thread_scratch<std::vector<uint32_t>>([] {});
    SlotCopies& copies = thread_scratch<SlotCopies>([] {});
    slot.resize(kCountTile);
    copies.reset(binning.slots());
    for (uint64_t t = 0; t < n; t += kCountTile) {
        const uint64_t m = std::min(kCountTile, n - t);
        binning.bin_slots(v + t, m, slot.data());
        copies.add(slot.data(), m, counts);
    }
    copies.flush(counts);
}

using Moments = CentralMoments<double>;

// What the first pass learns of a chunk: extremes, counts, sums and moments.
using ChunkSummary = ValueSummary<double>;

// Adds the extremes, zeros, sums and moments of n values (n < 2^32) to `out`, in vector loops
// (`omp simd` lets the sums be split across vector lanes). Returns false, adding nothing, when a
// value is NaN or infinite (its sum is then not finite: double sums of finite floats cannot
// overflow).
MLENS_VECTOR_LOOP bool summarize_finite(const float* v, uint64_t n, ChunkSummary& out) {
    double s = 0, a = 0;
    float lo = INFINITY, hi = -INFINITY;
    uint32_t z = 0;
#pragma omp simd reduction(+ : s, a, z) reduction(min : lo) reduction(max : hi)
    for (uint64_t i = 0; i < n; ++i) {
        const float x = v[i];
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        z += x == 0.0f;
        s += static_cast<double>(x);
        a += std::fabs(static_cast<double>(x));
    }
    if (!std::isfinite(s) || !std::isfinite(a)) return false;
    const double mean = n ? s / static_cast<double>(n) : 0.0;
    double m2 = 0, m3 = 0, m4 = 0;
#pragma omp simd reduction(+ : m2, m3, m4)
    for (uint64_t i = 0; i < n; ++i) {
        const double d = v[i] - mean, d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    out.zeros += z;
    out.min = std::min<double>(out.min, lo);
    out.max = std::max<double>(out.max, hi);
    out.sum_abs += a;
    out.moments.merge({n, mean, m2, m3, m4});
    return true;
}

// Runs fn(first, count) over [0, total) in chunks of `chunk`, on `threads` threads, as one job.
Status for_each_range(uint64_t total, uint64_t chunk, JobContext* job, unsigned threads, double progress_from, double progress_to,
                      const std::function<Status(uint64_t, uint64_t)>& fn) {
    return parallel_job((total + chunk - 1) / chunk, threads, job,
                        [&](uint64_t c) {
                            const uint64_t first = c * chunk;
                            return fn(first, std::min(chunk, total - first));
                        },
                        progress_from, progress_to);
}

// Runs fn(first, values, count) over the source's decoded values in chunks.
Status for_each_chunk(const FloatSource& src, JobContext* job, unsigned threads, double progress_from, double progress_to,
                      const std::function<void(uint64_t, const float*, uint64_t)>& fn) {
    return for_each_range(src.size(), src.chunk_length(kChunkTarget), job, threads, progress_from, progress_to,
                          [&](uint64_t first, uint64_t count) {
                              std::vector<float>& values = thread_scratch<std::vector<float>>([] {});
                              values.resize(count);
                              if (Status s = src.read(first, count, values.data()); !s) return s;
                              fn(first, values.data(), count);
                              return ok_status();
                          });
}

// How often each stored code occurs in the source (code_values.size() entries), counted into two
// interleaved copies per chunk as in count_slots.
Status count_codes(const FloatSource& src, size_t codes, JobContext* job, unsigned threads, double progress_to,
                   std::vector<uint64_t>& total) {
    total.assign(codes, 0);
    std::mutex m;
    const uint64_t per_thread = src.size() / (2 * std::max(threads, 1u)) + 1;
    const uint64_t chunk = std::clamp(per_thread, kCodeChunkMin, kCodeChunkMax);
    return for_each_range(src.size(), chunk, job, threads, 0.0, progress_to, [&](uint64_t first, uint64_t count) {
        std::vector<uint16_t>& code = thread_scratch<std::vector<uint16_t>>([] {});
        std::vector<uint32_t>& local = thread_scratch<std::vector<uint32_t>>([] {});
        code.resize(count);
        if (Status s = src.read_codes(first, count, code.data()); !s) return s;
        local.assign(2 * codes, 0);
        uint32_t* a = local.data();
        uint32_t* b = a + codes;
        uint64_t i = 0;
        for (; i + 2 <= count; i += 2) {
            ++a[code[i]];
            ++b[code[i + 1]];
        }
        if (i < count) ++a[code[i]];
        std::lock_guard lock(m);
        for (size_t c = 0; c < codes; ++c) total[c] += a[c] + b[c];
        return ok_status();
    });
}

// The first pass's figures from how often each code occurs: each distinct value is taken once,
// weighted by its count.
ChunkSummary summarize_codes(const std::vector<float>& value, const std::vector<uint64_t>& count) {
    ChunkSummary out;
    uint64_t n = 0;
    double sum = 0;
    for (size_t c = 0; c < value.size(); ++c) {
        if (count[c] == 0) continue;
        const float x = value[c];
        const auto k = static_cast<double>(count[c]);
        if (std::isnan(x))
            out.nan += count[c];
        else if (std::isinf(x)) {
            out.inf += count[c];
            if (x < 0) out.neg_inf += count[c];
        } else {
            n += count[c];
            sum += k * x;
            out.sum_abs += k * std::fabs(x);
            out.min = std::min<double>(out.min, x);
            out.max = std::max<double>(out.max, x);
            if (x == 0.0f) out.zeros += count[c];
        }
    }
    if (n == 0) return out;
    Moments& mo = out.moments;
    mo.n = n;
    mo.mean = sum / static_cast<double>(n);
    for (size_t c = 0; c < value.size(); ++c) {
        if (count[c] == 0 || !std::isfinite(value[c])) continue;
        const double k = static_cast<double>(count[c]), d = value[c] - mo.mean, d2 = d * d;
        mo.m2 += k * d2;
        mo.m3 += k * d2 * d;
        mo.m4 += k * d2 * d2;
    }
    return out;
}

// Counts in `binning`'s slots of the finite values, from how often each code occurs.
std::vector<uint64_t> bin_codes(const Binning& binning, const std::vector<float>& value, const std::vector<uint64_t>& count) {
    std::vector<float> present;
    std::vector<uint64_t> times;
    for (size_t c = 0; c < value.size(); ++c)
        if (count[c] != 0 && std::isfinite(value[c])) {
            present.push_back(value[c]);
            times.push_back(count[c]);
        }
    std::vector<uint32_t> slot(present.size());
    binning.bin_slots(present.data(), present.size(), slot.data());
    std::vector<uint64_t> counts(binning.slots(), 0);
    for (size_t i = 0; i < present.size(); ++i) counts[slot[i]] += times[i];
    return counts;
}

// Counts of the finite values in `binning`'s slots, over the whole source; `all_finite_known`
// skips looking for NaN and infinities.
Status count_source(const FloatSource& src, const Binning& binning, bool all_finite_known, JobContext* job, unsigned threads,
                    double progress_from, std::vector<uint64_t>& total) {
    total.assign(binning.slots(), 0);
    std::mutex m;
    return for_each_chunk(src, job, threads, progress_from, 1.0, [&](uint64_t, const float* v, uint64_t n) {
        std::vector<float>& scratch = thread_scratch<std::vector<float>>([] {});
        std::vector<uint32_t>& local = thread_scratch<std::vector<uint32_t>>([] {});
        FiniteValues f = all_finite_known ? FiniteValues{v, n, 0, 0, 0} : finite_values(v, n, scratch);
        local.assign(binning.slots(), 0);
        count_slots(binning, f.values, f.count, local.data());
        std::lock_guard lock(m);
        for (size_t s = 0; s < local.size(); ++s) total[s] += local[s];
    });
}

// The histogram of `coarse`'s bins from counts in bins 2^shift times finer.
Histogram coarsen(const Binning& coarse, const std::vector<uint64_t>& fine, uint32_t shift) {
    Histogram h;
    h.lo = coarse.lo;
    h.hi = coarse.hi;
    h.counts.assign(coarse.bins, 0);
    h.below = fine.front();
    h.above = fine.back();
    for (size_t b = 1; b + 1 < fine.size(); ++b) h.counts[(b - 1) >> shift] += fine[b];
    return h;
}

// [lo, hi] of a histogram over the data's [min, max]: a constant tensor still gets a visible bin.
Binning data_range_binning(double min, double max, uint32_t bins) {
    const double lo = std::isfinite(min) ? min : 0.0;
    double hi = std::isfinite(max) ? max : 0.0;
    if (!(hi > lo)) hi = lo + 1.0;
    return Binning::over(lo, hi, bins);
}

// The figures of one chunk; `finite` receives the chunk's finite values (the chunk itself when
// all are finite, else a copy in `scratch`).
ChunkSummary summarize_chunk(const float* v, uint64_t n, std::vector<float>& scratch, FiniteValues& finite) {
    ChunkSummary out;
    finite = {v, n, 0, 0, 0};
    if (summarize_finite(v, n, out)) return out;
    finite = only_finite(v, n, scratch);
    out.nan = finite.nan;
    out.inf = finite.inf;
    out.neg_inf = finite.neg_inf;
    summarize_finite(finite.values, finite.count, out);
    return out;
}

// First pass without a known range: extremes, counts and moments of every value.
Status summarize_source(const FloatSource& src, JobContext* job, unsigned threads, double progress_to, ChunkSummary& all) {
    OrderedParts<ChunkSummary> parts;
    Status s = for_each_chunk(src, job, threads, 0.0, progress_to, [&](uint64_t first, const float* v, uint64_t n) {
        std::vector<float>& scratch = thread_scratch<std::vector<float>>([] {});
        FiniteValues finite;
        parts.put(first, summarize_chunk(v, n, scratch, finite));
    });
    parts.merge_into(all);
    return s;
}

// The source's least and greatest value from quick_range over its chunks; nullopt when the source
// has none (asked of its first granule alone, before any chunk is read) or any chunk has none.
Result<std::optional<ValueBounds>> source_range(const FloatSource& src, JobContext* job, unsigned threads, double progress_to) {
    auto first = src.quick_range(0, std::min(src.chunk_length(1), src.size()));
    if (!first || !*first) return first;
    ValueBounds range = **first;
    bool complete = true;
    std::mutex m;
    const uint64_t chunk = src.chunk_length(kRangeChunk);
    Status s = for_each_range(src.size(), chunk, job, threads, 0.0, progress_to, [&](uint64_t from, uint64_t count) -> Status {
        auto r = src.quick_range(from, count);
        if (!r) return r.error();
        std::lock_guard lock(m);
        if (!*r)
            complete = false;
        else
            range = {std::min(range.min, (*r)->min), std::max(range.max, (*r)->max)};
        return ok_status();
    });
    if (!s) return s.error();
    if (!complete) return std::optional<ValueBounds>{};
    return std::optional<ValueBounds>{range};
}

// One pass over a source whose range is known: the first pass's figures and the counts in
// `binning`'s slots together, each chunk decoded once.
Status summarize_and_count(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                           ChunkSummary& all, std::vector<uint64_t>& total) {
    total.assign(binning.slots(), 0);
    PassTotals totals(total);
    Status s = for_each_chunk(src, job, threads, progress_from, 1.0, [&](uint64_t first, const float* v, uint64_t n) {
        std::vector<float>& scratch = thread_scratch<std::vector<float>>([] {});
        std::vector<uint32_t>& local = thread_scratch<std::vector<uint32_t>>([] {});
        FiniteValues finite;
        const ChunkSummary summary = summarize_chunk(v, n, scratch, finite);
        local.assign(binning.slots(), 0);
        count_slots(binning, finite.values, finite.count, local.data());
        totals.hand_in(first, summary, local);
    });
    totals.merge_into(all);
    return s;
}

// The fine bins for percentiles over the data's [min, max], whose bins add up to `bins`
// requested ones: bins * 2^shift of them, the least such count >= kPercentileBins.
struct HistogramBins {
    Binning user, fine;
    uint32_t shift = 0;

    HistogramBins(double min, double max, uint32_t bins) : user(data_range_binning(min, max, bins)) {
        while ((static_cast<uint64_t>(bins) << shift) < kPercentileBins) ++shift;
        fine = user.refined(shift);
    }
};

// The step tables (step_table_stats.h) of a source with scaled groups; nullopt for any other
// source, and where the tables decline it.
Result<std::optional<StepTables>> step_tables_for(const FloatSource& src, JobContext* job, unsigned threads) {
    if (src.scaled_groups() == 0) return std::optional<StepTables>{};
    return count_step_tables(src, job, threads, 0.0, kTablesProgress);
}

// compute_stats, plus a histogram of `histogram_bins` bins over [min, max] (at least one).
// Sources with stored codes count them in one pass; sources with code groups find their range from codes, then count each group's codes, summing and
// binning its distinct values (code_group_stats.h); sources with a quick range sum and bin in one
// pass (from codes, steps and offsets for sources with scaled or offset groups,
// scaled_group_stats.h, which a source with offset groups takes over its code groups), checked
// against the range found (counted again over the decoded extremes if they differ);
// any other source, and any whose bins do not settle in one (binning.h), is summed, then binned,
// in two passes.
Result<StatsAndHistogram> stats_pass(const FloatSource& src, uint32_t histogram_bins, JobContext* job, unsigned threads) {
    StatsAndHistogram out;
    TensorStats& st = out.stats;
    st.count = src.size();
    const std::vector<float> code_value = src.code_values();
    std::vector<uint64_t> code_count, counts;
    ChunkSummary all;
    if (!code_value.empty()) {
        if (Status s = count_codes(src, code_value.size(), job, threads, 1.0, code_count); !s) return s.error();
        all = summarize_codes(code_value, code_count);
        out.route = StatsRoute::stored_codes;
    } else if (src.code_groups().codes != 0 && src.offset_groups().length == 0) {
        // The quick range where the source has one (it reads less), else the codes' range.
        auto range = source_range(src, job, threads, kRangeProgress);
        if (range && !*range) range = code_group_range(src, job, threads, 0.0, kRangeProgress);
        if (!range) return range.error();
        std::optional<HistogramBins> bins;
        if (*range) bins.emplace((*range)->min, (*range)->max, histogram_bins);
        if (bins && bins->fine.settles_in_one) {
            if (Status s = summarize_code_groups(src, bins->fine, job, threads, kRangeProgress, 1.0, all, counts); !s) return s.error();
            out.route = StatsRoute::code_groups;
            if (all.min != (*range)->min || all.max != (*range)->max) counts.clear();
        } else if (Status s = summarize_source(src, job, threads, 0.5, all); !s) {
            return s.error();
        }
    } else if (auto tables = step_tables_for(src, job, threads); !tables) {
        return tables.error();
    } else if (*tables) {
        const ValueBounds r = step_table_range(**tables);
        const HistogramBins bins(r.min, r.max, histogram_bins);
        if (Status s = summarize_step_tables(**tables, bins.fine, job, threads, kTablesProgress, 1.0, all, counts); !s) return s.error();
        out.route = StatsRoute::step_tables;
    } else {
        auto range = source_range(src, job, threads, kRangeProgress);
        if (!range) return range.error();
        if (*range) {
            const HistogramBins bins((*range)->min, (*range)->max, histogram_bins);
            if ((src.scaled_groups() != 0 || src.offset_groups().length != 0) && bins.fine.settles_in_one) {
                if (Status s = summarize_scaled_groups(src, bins.fine, job, threads, kRangeProgress, 1.0, all, counts); !s)
                    return s.error();
                out.route = src.scaled_groups() != 0 ? StatsRoute::scaled_groups : StatsRoute::offset_groups;
            } else if (Status s = summarize_and_count(src, bins.fine, job, threads, kRangeProgress, all, counts); !s) {
                return s.error();
            }
            if (all.nan + all.inf != 0 || all.min != (*range)->min || all.max != (*range)->max) counts.clear();
        } else if (Status s = summarize_source(src, job, threads, 0.5, all); !s) {
            return s.error();
        }
    }
    // Decision: a zero extreme is +0. Which of -0 and +0 a minimum or maximum keeps depends on the
    // order a route compares them in (Q4_0 stores -0 wherever a negative step meets code 8), so
    // the sign would differ between routes, thread counts and tools; adding +0 clears it alone.
    all.min += 0.0;
    all.max += 0.0;
    const Moments& mo = all.moments;
    st.finite = mo.n;
    st.nan = all.nan;
    st.inf = all.inf;
    st.zeros = all.zeros;
    st.neg_inf = all.neg_inf;
    st.pos_inf = all.inf - all.neg_inf;
    const HistogramBins bins(all.min, all.max, histogram_bins);
    out.histogram = coarsen(bins.user, std::vector<uint64_t>(bins.user.slots(), 0), 0);
    if (mo.n == 0) {
        st.min = st.max = st.mean = st.std = st.mean_abs = st.kurtosis = st.percentile_within = NAN;
        st.percentiles.fill(NAN);
        return out;
    }
    const double n = static_cast<double>(mo.n);
    st.min = all.min;
    st.max = all.max;
    st.mean = mo.mean;
    st.mean_abs = all.sum_abs / n;
    const double var = mo.m2 / n;
    st.std = std::sqrt(var);
    st.kurtosis = var > 0 ? (mo.m4 / n) / (var * var) - 3.0 : 0.0;

    // Counts in the fine bins, unless the one-pass count above has them.
    if (!code_value.empty())
        counts = bin_codes(bins.fine, code_value, code_count);
    else if (counts.empty()) {
        if (Status s = count_source(src, bins.fine, all.nan + all.inf == 0, job, threads, 0.5, counts); !s) return s.error();
        out.route = StatsRoute::decoded;
    }
    out.histogram = coarsen(bins.user, counts, bins.shift);
    const double width = (st.max - st.min) / bins.fine.bins;
    st.percentile_within = width / 2;
    for (size_t p = 0; p < TensorStats::kPercentiles.size(); ++p) {
        // Value at the middle of the bin holding the requested rank.
        const auto rank = std::max<uint64_t>(static_cast<uint64_t>(std::ceil(TensorStats::kPercentiles[p] / 100.0 * n)), 1);
        uint64_t seen = 0;
        uint32_t b = 0;
        for (; b + 1 < bins.fine.bins; ++b) {
            seen += counts[b + 1];
            if (seen >= rank) break;
        }
        st.percentiles[p] = std::min(st.max, st.min + (b + 0.5) * width);
    }
    return out;
}

}  // namespace

std::string wide_integer_text(WideInteger v) {
    // Digits of the magnitude, built from the last; the magnitude of the least value fits unsigned.
    __extension__ using Unsigned = unsigned __int128;
    Unsigned m = v < 0 ? Unsigned(0) - static_cast<Unsigned>(v) : static_cast<Unsigned>(v);
    std::string digits;
    do {
        digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
        m /= 10;
    } while (m != 0);
    if (v < 0) digits.push_back('-');
    return {digits.rbegin(), digits.rend()};
}

const char* stats_route_name(StatsRoute route) {
    switch (route) {
        case StatsRoute::stored_codes:
            return "stored codes";
        case StatsRoute::code_groups:
            return "code groups";
        case StatsRoute::step_tables:
            return "step tables";
        case StatsRoute::scaled_groups:
            return "scaled groups";
        case StatsRoute::offset_groups:
            return "offset groups";
        case StatsRoute::decoded:
            break;
    }
    return "decoded";
}

uint64_t Histogram::total() const {
    uint64_t t = below + above;
    for (uint64_t c : counts) t += c;
    return t;
}

Result<Histogram> compute_histogram(const FloatSource& src, uint32_t bins, std::optional<std::pair<double, double>> range, JobContext* job,
                                    unsigned threads) {
    if (bins == 0) return Error{ErrorCode::E_RANGE, "bins", std::nullopt, "at least one bin is needed"};
    if (!range) {
        Result<StatsAndHistogram> r = stats_pass(src, bins, job, threads);
        if (!r) return r.error();
        return r->histogram;
    }
    double hi = range->second;
    if (!(hi > range->first)) hi = range->first + 1.0;
    const Binning binning = Binning::over(range->first, hi, bins);
    std::vector<uint64_t> counts;
    if (const std::vector<float> code_value = src.code_values(); !code_value.empty()) {
        std::vector<uint64_t> code_count;
        if (Status s = count_codes(src, code_value.size(), job, threads, 1.0, code_count); !s) return s.error();
        counts = bin_codes(binning, code_value, code_count);
    } else if (Status s = count_source(src, binning, false, job, threads, 0.0, counts); !s)
        return s.error();
    return coarsen(binning, counts, 0);
}

Result<TensorStats> compute_stats(const FloatSource& source, JobContext* job, unsigned threads) {
    Result<StatsAndHistogram> r = stats_pass(source, 1, job, threads);
    if (!r) return r.error();
    if (source.wide_kind() != WideKind::none)
        if (Status s = apply_wide_figures(source, r->stats, job, threads); !s) return s.error();
    return r->stats;
}

Result<StatsAndHistogram> compute_stats_and_histogram(const FloatSource& source, uint32_t bins, JobContext* job, unsigned threads) {
    if (bins == 0) return Error{ErrorCode::E_RANGE, "bins", std::nullopt, "at least one bin is needed"};
    Result<StatsAndHistogram> r = stats_pass(source, bins, job, threads);
    if (r && source.wide_kind() != WideKind::none)
        if (Status s = apply_wide_figures(source, r->stats, job, threads); !s) return s.error();
    return r;
}

}  // namespace mlens
