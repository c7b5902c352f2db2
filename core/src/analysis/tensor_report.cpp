#include "mlens/analysis/tensor_report.h"

#include "mlens/quant/row_series.h"

namespace mlens {

namespace {

void announce(const TensorReportOptions& options, TensorReportStep step, JobContext* job) {
    if (options.on_step) options.on_step(step);
    job_report(job, 0);
}

// The statistics (and histogram, when asked) of each series, appended to `out`.
Status summarize_series(std::vector<ScaleSeries>& series, uint32_t bins, std::vector<SeriesSummary>& out, JobContext* job) {
    for (ScaleSeries& s : series) {
        SeriesSummary summary{s.name, s.values_per_entry, {}, {}, s.stride};
        const VectorSource values(s.values);
        if (bins == 0) {
            Result<TensorStats> stats = compute_stats(values, job);
            if (!stats) return stats.error();
            summary.stats = *stats;
        } else {
            Result<StatsAndHistogram> both = compute_stats_and_histogram(values, bins, job);
            if (!both) return both.error();
            summary.stats = both->stats;
            summary.histogram = std::move(both->histogram);
        }
        out.push_back(std::move(summary));
    }
    return ok_status();
}

}  // namespace

Result<TensorReport> tensor_report(const TensorView& view, const TensorReportOptions& options, JobContext* job) {
    TensorReport report;
    std::vector<ScaleSeries> rows;
    if (options.statistics) {
        announce(options, TensorReportStep::statistics, job);
        // compute_stats is compute_stats_and_histogram with one bin, the histogram left out.
        Result<StatsAndHistogram> both = compute_stats_and_histogram(view, options.bins == 0 ? 1 : options.bins, job);
        if (!both) return both.error();
        report.stats = both->stats;
        report.stats_route = both->route;
        if (options.bins != 0) report.histogram = std::move(both->histogram);
    }
    if (options.row_series) {
        announce(options, TensorReportStep::row_series, job);
        Result<std::vector<ScaleSeries>> read = row_series(view, job);
        if (!read) return read.error();
        rows = std::move(read).value();
    }
    std::vector<ScaleSeries> scales;
    if (options.block_scales) {
        announce(options, TensorReportStep::block_scales, job);
        Result<BlockScales> decoded = block_scales(view, job);
        if (decoded)
            scales = std::move(decoded->series);
        else if (decoded.error().code == ErrorCode::E_CANCELLED)
            return decoded.error();
        else
            report.block_scales_error = decoded.error();
    }
    if (!scales.empty() || !rows.empty()) {
        announce(options, TensorReportStep::series_statistics, job);
        if (Status s = summarize_series(scales, options.series_bins, report.block_scales, job); !s) return s.error();
        if (Status s = summarize_series(rows, options.series_bins, report.rows, job); !s) return s.error();
    }
    return report;
}

const char* stats_route_summary(StatsRoute route) {
    switch (route) {
        case StatsRoute::stored_codes:
            return "each stored code counted, each distinct code decoded, summed and binned once; no value decoded into a buffer";
        case StatsRoute::code_groups:
            return "each group's codes counted, each of its distinct values summed and binned once by its count; no value decoded into a "
                   "buffer";
        case StatsRoute::step_tables:
            return "codes counted once per distinct step, each step's values summed and binned once; no value decoded into a buffer";
        case StatsRoute::scaled_groups:
            return "each value summed and binned from its code and its group's step; no value decoded into a buffer";
        case StatsRoute::offset_groups:
            return "each value summed and binned from its code, its group's step and offset; no value decoded into a buffer";
        case StatsRoute::decoded:
            break;
    }
    return "values read as floats (decoded where stored otherwise) and binned";
}

}  // namespace mlens
