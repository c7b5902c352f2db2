// TensorReport: what is known of one tensor's values — statistics, a histogram, the distribution
// of its block scales and of its per-row RMS and max |x| — computed by one function that both
// `mlens stats` and the GUI's Weights panel call.
//
// Contract:
//  - tensor_report(view, options, job) reads the view (a tensor or one expert slice) for the
//    statistics (stats.h), then again for the row series (row_series.h), then the block scales
//    (block_scales.h) from their own read of the scale fields.
//    Decision (measured on 16M-value Q4_0, Q4_K, Q5_K, Q8_0 and F16 tensors, 2 threads): the
//    statistics take their code-domain routes (2.1-3.1 G values/s: stats.h) and the row series
//    alone run at 2.8-5.1 G/s; handing decoded values to the row series from the statistics'
//    pass held every type to decoding (0.47-1.03 G/s for both), where the two passes apart take
//    1.2-1.7 G/s. The price is one more read of the tensor: a local one comes from the page cache
//    when the tensor fits in memory; a remote tensor larger than remote_source.h holds is read
//    again from the disk range cache, or fetched again where that cache cannot keep it.
//  - statistics: compute_stats' figures when `bins` is 0; else compute_stats_and_histogram's
//    figures and its histogram of `bins` bins over [min, max] (percentiles from bins * 2^k fine
//    bins: see stats.h); and the route they took.
//  - Series (block scales, then rows): per series its statistics as compute_stats gives them when
//    `series_bins` is 0, else compute_stats_and_histogram's with a histogram of `series_bins`
//    bins over [min, max].
//  - A block-scale failure does not fail the report: it is kept in `block_scales_error` with no
//    block-scale series (E_UNSUPPORTED_TYPE: the type stores no block scales this decodes). Any
//    other failure (a read error, E_CANCELLED) fails the report.
//  - on_step, when set, is called on the calling thread before each step: statistics, row series,
//    block scales, their and the rows' statistics; a step not asked for is not announced.
//    Progress (job) starts again at 0 in each step.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

enum class TensorReportStep { statistics = 0, row_series = 1, block_scales = 2, series_statistics = 3 };

struct TensorReportOptions {
    bool statistics = true;
    uint32_t bins = 0;  // histogram of the values (0: none)
    bool block_scales = true;
    bool row_series = true;
    uint32_t series_bins = 0;  // histogram of each series (0: none)
    std::function<void(TensorReportStep)> on_step;
};

// One series of block scales ("d", "sub_scale", ...) or rows ("row_rms"): its statistics and
// histogram.
struct SeriesSummary {
    std::string name;
    uint64_t values_per_entry = 0;  // tensor values each entry covers
    TensorStats stats;  // stats.count: the number of entries
    Histogram histogram;  // empty when series_bins is 0
    uint64_t stride = 1;  // a sample of every stride-th block (block_scales.h)
};

struct TensorReport {
    std::optional<TensorStats> stats;  // when asked
    std::optional<StatsRoute> stats_route;  // the route the statistics took (stats.h), when asked
    Histogram histogram;  // when asked with bins
    std::vector<SeriesSummary> block_scales;
    std::optional<Error> block_scales_error;
    std::vector<SeriesSummary> rows;  // row_rms, row_absmax
};

Result<TensorReport> tensor_report(const TensorView& view, const TensorReportOptions& options, JobContext* job = nullptr);

// What a route read and what it skipped, in words for `mlens stats` and the Weights panel. Every
// route but `decoded` ends "no value decoded into a buffer"; `decoded` speaks of the bins alone,
// since its sums may come from the codes of a pass whose counts were taken again (stats.h).
const char* stats_route_summary(StatsRoute route);

}  // namespace mlens
