// Weights inspection: what the app's Weights panel shows of one tensor, from a request to a
// result (the app runs it on a worker thread):
// statistics, a histogram, the first values, optionally a comparison with the same-named
// tensor of another model or with this tensor requantized as a ggml type (metrics, the other
// values' histogram over the same range, and the histogram of the element-wise difference),
// and the distribution of its block scales and of its per-row RMS and max |x|.
//
// Contract:
//  - analyze_weights opens the TensorView (and slices the expert), then runs tensor_report
//    (tensor_report.h: statistics when asked, their histogram of `bins` bins over [min, max]
//    unless `range` is set, and, when asked, the block scales and row series with histograms of
//    `bins` bins); then the ranged histogram (ranged_histogram.h, the pass `mlens hist` runs)
//    over `range`, else over the range `range_mode` picks from the statistics (those computed,
//    else `known_stats`, else [min, max]), named in `range_used`, taking the report's when it is
//    that one; first values; compare. It stops at
//    the first failure with an escaped message in `error` (or `compare_error` / `scales->note`
//    for the comparison and the block scales, whose failure leaves the rest valid). `stage`
//    counts finished steps for the progress bar (statistics, the row series, decoding the
//    block scales, the series' statistics, histogram, first values, compare; a step not asked
//    for counts as finished; progress = (stage + job progress) / kWeightsStages); cancellation
//    ends it with `cancelled` set.
//  - The request holds the Models by shared_ptr, so the documents may close meanwhile.
//  - first values: the first `rows` rows (ne[0] values each) of the view, at most `columns` of each.
//  - The comparison target is `other` when set, else `requant_type` when set. Another model's
//    tensor is the viewed one's pair by pair_tensors (model_error.h), through the HF→GGUF map
//    when automatic_name_alignment finds one, values transformed as the converter does; a tensor
//    paired whole while an expert is viewed compares that expert on both sides. It needs equal
//    element counts. Worst blocks use the candidate's block (else this tensor's). The requantized copy is the viewed
//    tensor (or expert slice) passed through requantized_source (requant.h) with rows of its
//    ne[0] values; a type it refuses leaves that reason in `compare_error`. The other values'
//    histogram uses this one's range and bin count so the two overlay bin for bin.
//  - Block scales, then the row series (row_rms, row_absmax) of the viewed tensor or expert
//    slice, from tensor_report: per series its statistics and a histogram of `bins` bins over
//    [min, max]. A type that stores no block scales (F32, F16, BF16, integer types) or whose
//    scales are not decoded has a note saying so (not an error) and the row series only; a
//    failure leaves no series and the error as the note. `scales` stays empty when the request
//    did not ask for them (the caller keeps the ones it has).
//  - histogram_csv writes "series,bin,lo,hi,count" rows, bin bounds with 9 significant digits.
//  - requantize_weights measures against the reference open_requant_reference
//    (requant_reference.h) chooses for the tensor (and expert slice), given `other` (the document
//    chosen under "compare with"), and runs requantize (requant.h) on it with rows of the tensor's
//    row length: one row per requested type, in the request's order; with `imatrix`, with the
//    importance importance_for (imatrix.h) gives the tensor. `reference` names the reference,
//    `note` says why it is the tensor itself. A failure (also: no importance for the tensor) is
//    the Result's error, E_CANCELLED when the job was cancelled.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/analysis/requant.h"
#include "mlens/analysis/tensor_compare.h"
#include "mlens/analysis/tensor_report.h"
#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/quant/histogram_range.h"
#include "mlens/quant/imatrix.h"
#include "mlens/quant/stats.h"

namespace mlens {

constexpr int kWeightsStages = 7;

struct WeightsRequest {
    std::shared_ptr<const Model> model;
    size_t tensor = 0;
    std::optional<uint64_t> expert;  // slice of the slowest dimension
    bool want_stats = true;
    uint32_t bins = 128;
    std::optional<std::pair<double, double>> range;
    HistogramRangeMode range_mode = HistogramRangeMode::automatic;  // when no `range`
    std::optional<TensorStats> known_stats;  // the tensor's statistics when want_stats is off
    uint64_t rows = 16, columns = 12;
    std::shared_ptr<const Model> other;  // compare target, or null
    std::optional<uint32_t> requant_type;  // compare with this tensor requantized as this ggml type
    bool want_scales = true;
};

struct BlockScalesSummary {
    uint32_t bins = 0;  // bin count of the histograms
    std::vector<SeriesSummary> series;  // block scales, then rows
    std::string note;  // why there are no block scales, display-safe
    bool failed = false;  // the note is an error, not a type's property
};

struct WeightsResult {
    std::atomic<int> stage{0};
    bool cancelled = false;
    std::string error;
    std::optional<TensorStats> stats;
    std::optional<StatsRoute> stats_route;  // how the statistics reached the values, with stats
    Histogram histogram;
    HistogramRange range_used;  // how the histogram's range was chosen
    uint64_t row_length = 0;
    uint64_t elements = 0;
    std::vector<std::vector<float>> first_values;  // rows × up to `columns`
    bool compared = false;
    std::string compare_error;
    TensorComparison comparison;
    Histogram other_histogram;
    Histogram error_histogram;
    std::optional<BlockScalesSummary> scales;
};

// Whether the tensor is a stack of experts (3-D or more, or a member of an expert group), and
// how many.
std::optional<uint64_t> expert_count(const Model& model, size_t tensor);

void analyze_weights(const WeightsRequest& request, WeightsResult& result, JobContext* job);

struct NamedHistogram {
    std::string name;
    const Histogram* histogram;
};
std::string histogram_csv(const std::vector<NamedHistogram>& series);

struct RequantRequest {
    std::shared_ptr<const Model> model;
    size_t tensor = 0;
    std::optional<uint64_t> expert;
    std::vector<uint32_t> ggml_types;
    std::shared_ptr<const Model> other;  // the model chosen under "compare with", or null
    std::shared_ptr<const Imatrix> imatrix;  // quantize with its importance, or null
};

struct RequantResult {
    std::string reference_type;  // the reference's type name, display-safe
    std::string reference;  // "blk.0.attn_q.weight (F32) of the compared file", display-safe
    std::string note;  // why the tensor itself is the reference, display-safe
    std::string imatrix_entry;  // the importance matrix entry used, display-safe
    std::vector<RequantRow> rows;
};

Result<RequantResult> requantize_weights(const RequantRequest& request, JobContext* job);

}  // namespace mlens
