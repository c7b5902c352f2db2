#include "mlens/analysis/weights_inspection.h"

#include <algorithm>
#include <cstdio>

#include "mlens/analysis/model_error.h"
#include "mlens/analysis/ranged_histogram.h"
#include "mlens/analysis/requant_reference.h"
#include "mlens/analysis/tensor_report.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"
#include "mlens/util/analysis_memory.h"

namespace mlens {

namespace {

std::string message_of(const Error& e) { return escape_for_display(e.to_string(), 400); }

Result<TensorView> open_view(const Model& model, size_t tensor, std::optional<uint64_t> expert) {
    Result<TensorView> view = TensorView::open(model, tensor);
    if (!view || !expert) return view;
    return view->slice(*expert);
}

// Values per side up to which a comparison reads both sides into memory once (half the analysis
// memory bound for the two): its three passes then cost one read of each file, and one
// quantization of a requantized copy.
constexpr uint64_t kComparedInMemory = kAnalysisMemoryBound / 2 / (2 * sizeof(float));

// Metrics, the other values' histogram over this one's range and the difference histogram.
void compare_sources_of(const FloatSource& mine, const FloatSource& theirs, uint64_t block, WeightsResult& out, JobContext* job) {
    Result<TensorComparison> metrics = compare_sources(mine, theirs, out.row_length, 5, job, 0, 0.0, 1.0, block);
    if (!metrics) {
        out.compare_error = message_of(metrics.error());
        return;
    }
    out.comparison = std::move(metrics).value();
    auto bins = static_cast<uint32_t>(out.histogram.counts.size());
    Result<Histogram> overlay = compute_histogram(theirs, bins, std::make_pair(out.histogram.lo, out.histogram.hi), job);
    if (!overlay) {
        out.compare_error = message_of(overlay.error());
        return;
    }
    DifferenceSource difference(mine, theirs);
    Result<Histogram> errors = compute_histogram(difference, bins, std::nullopt, job);
    if (!errors) {
        out.compare_error = message_of(errors.error());
        return;
    }
    out.other_histogram = std::move(overlay).value();
    out.error_histogram = std::move(errors).value();
    out.compared = true;
}

// `block`: the quantization block the worst blocks are measured in.
void compare_values(const FloatSource& mine, const FloatSource& theirs, uint64_t block, WeightsResult& out, JobContext* job) {
    if (mine.size() > kComparedInMemory) return compare_sources_of(mine, theirs, block, out, job);
    Result<std::vector<float>> a = read_all(mine, job);
    Result<std::vector<float>> b = a ? read_all(theirs, job) : Result<std::vector<float>>(a.error());
    if (!b) {
        out.compare_error = message_of(b.error());
        return;
    }
    compare_sources_of(VectorSource(*a), VectorSource(*b), block, out, job);
}

void compare_with_model(const WeightsRequest& rq, WeightsResult& out, JobContext* job) {
    std::optional<TensorPair> pair = find_counterpart(*rq.model, rq.tensor, rq.expert, *rq.other);
    if (!pair) {
        out.compare_error = "the other model has no tensor paired with " + escape_for_display(rq.model->tensors[rq.tensor].name, 120) +
            (rq.expert ? " expert " + std::to_string(*rq.expert) : std::string());
        return;
    }
    auto mine = PairSource::open(*rq.model, pair->a);
    auto theirs = mine ? PairSource::open(*rq.other, pair->b) : Result<std::unique_ptr<PairSource>>(mine.error());
    if (!theirs) {
        out.compare_error = message_of(theirs.error());
        return;
    }
    const FloatSource& a = (*mine)->source();
    const FloatSource& b = (*theirs)->source();
    if (a.size() != b.size()) {
        out.compare_error = "element counts differ: " + std::to_string(a.size()) + " here, " + std::to_string(b.size()) + " there";
        return;
    }
    compare_values(a, b, comparison_block_length((*mine)->view().block_length(), (*theirs)->view().block_length()), out, job);
}

void compare_with_requantized(uint32_t type, const TensorView& view, WeightsResult& out, JobContext* job) {
    // A copy compared in memory is read once; one that streams is read by each pass, so it keeps
    // its quantized rows instead of quantizing them again.
    Result<std::unique_ptr<FloatSource>> requantized = requantized_source(view, out.row_length, type, view.size() > kComparedInMemory);
    if (!requantized) {
        out.compare_error = escape_for_display(requantized.error().message, 400);
        return;
    }
    compare_values(view, **requantized, comparison_block_length(view.block_length(), describe_ggml_type(type).block_size), out, job);
}

// The block-scale series, then the row series, of the report; a type without block scales has a
// note saying so, and a failure leaves no series and the error as the note.
BlockScalesSummary summarize_scales(const TensorView& view, uint32_t bins, TensorReport& report) {
    BlockScalesSummary summary;
    summary.bins = bins;
    if (report.block_scales_error && report.block_scales_error->code == ErrorCode::E_UNSUPPORTED_TYPE) {
        // Element types (block length 1) have no scales; other block types keep theirs in
        // layouts block_scales does not decode.
        std::string type = escape_for_display(view.type_name(), 60);
        summary.note = view.block_length() > 1 ? "the block scales of " + type + " are not decoded" : type + " stores no block scales";
    } else if (report.block_scales_error) {
        summary.note = message_of(*report.block_scales_error);
        summary.failed = true;
        return summary;
    }
    summary.series = std::move(report.block_scales);
    for (SeriesSummary& row : report.rows) summary.series.push_back(std::move(row));
    return summary;
}

}  // namespace

std::optional<uint64_t> expert_count(const Model& model, size_t tensor) {
    if (tensor >= model.tensors.size()) return std::nullopt;
    const TensorInfo& t = model.tensors[tensor];
    for (const TensorGroup& g : model.groups)
        if (g.kind == "experts" && std::find(g.members.begin(), g.members.end(), tensor) != g.members.end() && t.ne.size() >= 3)
            return t.ne.back();
    if (t.ne.size() >= 3 && t.ne.back() > 1) return t.ne.back();
    return std::nullopt;
}

void analyze_weights(const WeightsRequest& rq, WeightsResult& out, JobContext* job) {
    auto stop = [&](const Error& e) {
        out.cancelled = e.code == ErrorCode::E_CANCELLED;
        out.error = message_of(e);
    };
    Result<TensorView> view = open_view(*rq.model, rq.tensor, rq.expert);
    if (!view) return stop(view.error());
    out.elements = view->size();
    out.row_length = std::max<uint64_t>(1, view->row_length());
    const RangedHistogramRequest ranged{std::max<uint32_t>(1, rq.bins), rq.range_mode, rq.range};
    // The histogram over [min, max] comes from the statistics' own second pass; another range
    // (outliers, or a mode asked for) takes one more.
    TensorReportOptions options;
    options.statistics = rq.want_stats;
    options.bins = rq.want_stats && !rq.range ? ranged.bins : 0;
    options.block_scales = options.row_series = rq.want_scales;
    options.series_bins = ranged.bins;
    // The report's four steps, in order, are the first four stages.
    options.on_step = [&](TensorReportStep step) { out.stage = static_cast<int>(step); };
    Result<TensorReport> report = tensor_report(*view, options, job);
    if (!report) return stop(report.error());
    if (rq.want_scales) out.scales = summarize_scales(*view, ranged.bins, *report);
    out.stats = report->stats;
    out.stats_route = report->stats_route;
    const TensorStats* stats = report->stats ? &*report->stats : rq.known_stats ? &*rq.known_stats : nullptr;
    out.stage = 4;
    job_report(job, 0);
    Result<RangedHistogram> histogram = ranged_histogram(*view, ranged, stats, options.bins ? &report->histogram : nullptr, job);
    if (!histogram) return stop(histogram.error());
    out.histogram = std::move(histogram->histogram);
    out.range_used = histogram->range;
    out.stage = 5;
    job_report(job, 0);

    // The first columns of each row, read row by row: a row may be far longer than what is shown.
    const uint64_t rows = std::min(rq.rows, (view->size() + out.row_length - 1) / out.row_length);
    const uint64_t columns = std::min(rq.columns, out.row_length);
    const uint64_t granularity = std::max<uint64_t>(1, view->granularity());
    const uint64_t read_length = (columns + granularity - 1) / granularity * granularity;
    for (uint64_t r = 0; r < rows; ++r) {
        const uint64_t begin = r * out.row_length;
        std::vector<float> values(std::min(view->size() - begin, read_length));
        if (Status read = view->read(begin, values.size(), values.data()); !read) return stop(read.error());
        values.resize(std::min<uint64_t>(values.size(), columns));
        out.first_values.push_back(std::move(values));
    }
    out.stage = 6;
    job_report(job, 0);
    if (rq.other || rq.requant_type) {
        if (rq.other)
            compare_with_model(rq, out, job);
        else
            compare_with_requantized(*rq.requant_type, *view, out, job);
        if (job_cancelled(job)) {
            out.cancelled = true;
            return;
        }
    }
    out.stage = kWeightsStages;
}

Result<RequantResult> requantize_weights(const RequantRequest& rq, JobContext* job) {
    RequantResult out;
    Result<RequantReference> reference = open_requant_reference(*rq.model, rq.tensor, rq.expert, rq.other.get());
    if (!reference) return reference.error();
    const FloatSource& values = reference->values->source();
    const uint64_t row_length = std::max<uint64_t>(1, reference->values->view().row_length());
    out.reference_type = escape_for_display(reference->type_name, 60);
    out.reference = escape_for_display(reference->tensor_name, 120) + " (" + out.reference_type + ")" +
        (reference->counterpart ? " of the compared file" : "");
    out.note = escape_for_display(reference->note, 400);
    std::optional<ColumnImportance> importance;
    if (rq.imatrix) {
        Result<ColumnImportance> found =
            importance_for(*rq.imatrix, rq.model->tensors[rq.tensor].name, row_length, values.size() / row_length, rq.expert);
        if (!found) return found.error();
        importance = std::move(found).value();
        out.imatrix_entry = escape_for_display(importance->entry, 120);
    }
    Result<std::vector<RequantRow>> rows = requantize(values, row_length, rq.ggml_types, job, 0, importance ? &*importance : nullptr);
    if (!rows) return rows.error();
    out.rows = std::move(rows).value();
    return out;
}

std::string histogram_csv(const std::vector<NamedHistogram>& series) {
    std::string out = "series,bin,lo,hi,count\n";
    char buf[128];
    for (const NamedHistogram& s : series) {
        const Histogram& h = *s.histogram;
        double w = h.bin_width();
        std::string name = s.name;
        std::replace(name.begin(), name.end(), ',', ';');
        std::replace(name.begin(), name.end(), '\n', ' ');
        for (size_t b = 0; b < h.counts.size(); ++b) {
            double lo = h.lo + w * static_cast<double>(b);
            double hi = b + 1 == h.counts.size() ? h.hi : h.lo + w * static_cast<double>(b + 1);
            std::snprintf(buf, sizeof buf, ",%zu,%.9g,%.9g,%llu\n", b, lo, hi, static_cast<unsigned long long>(h.counts[b]));
            out += name + buf;
        }
    }
    return out;
}

}  // namespace mlens
