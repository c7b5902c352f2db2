// Statistics and histograms of a FloatSource, computed in chunks on several threads.
//
// Contract:
//  - compute_stats makes two passes: moments, extremes and counts; then a histogram of at least
//    4096 bins over [min, max] from which percentiles are read (exact to one bin width, at most
//    (max-min)/4096). A source with stored codes counts them in one pass instead; a source with
//    a quick range (float_source.h) finds [min, max] from its codes and scales first, then sums
//    and bins in one decoding pass, and counts again only when the decoded extremes differ from
//    that range. A source with code groups (float_source.h) finds that range
//    from its codes and scales, then counts each group's codes in one pass, summing and binning
//    each distinct value of a group once, weighted by its count (code_group_stats.h); it decodes
//    values instead when a range end is NaN or infinite. A source with scaled groups
//    (float_source.h) whose steps are half floats that repeat (Q8_0) counts each code once per
//    distinct step over the whole source, in one read, and takes its range, bins and sums from
//    those tables (step_table_stats.h); one whose steps do not, with a quick range, bins each value
//    from its code and step in one pass after that range instead of decoding it
//    (scaled_group_stats.h). Every route gives the same figures. NaN and ±Inf are counted and excluded from every other figure. Sums and
//    central moments are in double: each chunk's about its own mean, merged pairwise (Pébay), so
//    the last bits depend on the order of the chunks. +Inf and -Inf are also counted apart.
//  - A source with no finite value has no min, max, mean, std, mean |x|, kurtosis or
//    percentiles: they are NaN (say "none"), never 0. A zero min or max is +0, whichever signs of
//    zero the source holds.
//  - A source with wide values (float_source.h: I32, I64, U32, U64, F64 tensors) takes every
//    count and figure but the percentiles from them, not from their float roundings (one more
//    pass, wide_stats.h): integer_extremes holds an integer source's min and max exactly (min and
//    max are them rounded to double, exact up to 2^53), integer sums are exact in 128 bits, F64
//    sums and every moment are in long double. The histogram and percentiles are those of the
//    values rounded to float (to one bin width, as for every source), percentiles kept inside
//    [min, max].
//  - compute_histogram counts finite values in `bins` equal bins over [lo, hi] (values outside
//    are counted in below/above); with no range given it uses [min, max] of the data. A value's
//    bin is np.histogram's over the values as float64: bin j holds edge(j) <= x < edge(j + 1),
//    edge(j) = j * ((hi - lo) / bins) + lo in double (numpy.linspace), the last bin also holding
//    hi; hi <= lo is taken as [lo, lo + 1].
//  - compute_stats_and_histogram gives compute_stats' figures and, from the same second pass,
//    the histogram compute_histogram(source, bins) would give (equal counts, lo and hi), from the
//    same passes. Its percentiles come from bins * 2^k fine
//    bins (the least such count >= 4096, whose bins add up exactly to the requested ones), so
//    for bin counts that do not divide 4096 they may differ from compute_stats' by one bin.
//  - compute_stats_and_histogram also says which route its statistics took (StatsRoute): the
//    route of the pass that summed and binned the values; `decoded` when that pass decoded them,
//    or when its counts were taken again from decoded values (a range the pass disagreed with, or
//    a NaN or infinity it met).
//  - Both honour JobContext cancel (E_CANCELLED) and report progress.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/float_source.h"

namespace mlens {

// An integer of any type up to 64 bits, signed or not.
__extension__ using WideInteger = __int128;
// Decimal digits of an integer, with a leading '-' when negative.
std::string wide_integer_text(WideInteger v);

struct IntegerExtremes {
    WideInteger min = 0, max = 0;
};

struct TensorStats {
    uint64_t count = 0;  // all elements
    uint64_t finite = 0;
    uint64_t nan = 0;
    uint64_t inf = 0;  // pos_inf + neg_inf
    uint64_t pos_inf = 0, neg_inf = 0;
    uint64_t zeros = 0;
    double min = 0, max = 0, mean = 0, std = 0, mean_abs = 0;
    double kurtosis = 0;  // excess kurtosis (0 for a normal distribution)
    static constexpr std::array<double, 9> kPercentiles = {0.1, 1, 5, 25, 50, 75, 95, 99, 99.9};
    std::array<double, 9> percentiles{};
    // How far each percentile may be from the exact one: half the width of the fine bins it is
    // read from (the middle of the bin holding its rank); NaN with no finite value.
    double percentile_within = 0;
    std::optional<IntegerExtremes> integer_extremes;  // integer sources with a finite value
};

struct Histogram {
    double lo = 0, hi = 0;
    std::vector<uint64_t> counts;
    uint64_t below = 0, above = 0;
    double bin_width() const { return counts.empty() ? 0 : (hi - lo) / static_cast<double>(counts.size()); }
    uint64_t total() const;
};

// How the statistics reached the values (the routes of the contract above): counting stored codes
// once each, counting each group's codes, step tables, binning each value from its code, step
// (and offset) without decoding it, or decoding.
enum class StatsRoute { stored_codes, code_groups, step_tables, scaled_groups, offset_groups, decoded };
// "stored codes", "code groups", "step tables", "scaled groups", "offset groups", "decoded".
const char* stats_route_name(StatsRoute route);

struct StatsAndHistogram {
    TensorStats stats;
    Histogram histogram;
    StatsRoute route = StatsRoute::decoded;
};

Result<TensorStats> compute_stats(const FloatSource& source, JobContext* job = nullptr, unsigned threads = 0);
Result<StatsAndHistogram> compute_stats_and_histogram(const FloatSource& source, uint32_t bins, JobContext* job = nullptr,
                                                      unsigned threads = 0);
Result<Histogram> compute_histogram(const FloatSource& source, uint32_t bins, std::optional<std::pair<double, double>> range = std::nullopt,
                                    JobContext* job = nullptr, unsigned threads = 0);

}  // namespace mlens
