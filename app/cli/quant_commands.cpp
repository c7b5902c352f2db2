// mlens stats PATH TENSOR [--json] [--expert N]
//   Statistics of the dequantized values, of each block-scale series for types that store them
//   (block_scales.h; a type without prints none, "block_scales": []; "stride" k > 1 when the
//   series is a sample of one block in k) and of the per-row RMS and max |x| (row_series.h,
//   "rows"; entries of several rows each on a tensor of very many rows), all from tensor_report.h. JSON echoes "name",
//   "type", "shape" with its "shape_order" (model_json.h) and "expert" (null without --expert);
//   "route" names how the statistics reached the values (stats.h: "code groups", "decoded", ...),
//   the text's "route" row the same with what it read (stats_route_summary, tensor_report.h);
//   a figure with no finite value to take it from is null ("none" in text); integer tensors give
//   min and max as exact integers; +Inf and -Inf are counted apart ("pos_inf", "neg_inf").
// mlens hist PATH TENSOR [--bins N] [--range-mode auto|full|p999|symmetric] [--range LO HI] [--csv OUT]
//            [--png OUT [--log]] [--json]
//   The histogram is ranged_histogram.h's, as in the app (default auto: p0.1-p99.9 widened when the tensor has
//   outliers, else min..max; --range LO HI is the custom mode). Text, PNG and JSON name the mode
//   asked and the one used in the same words ("mode auto, resolved full"; "range_mode",
//   "range_resolved") and count the values below and above.
//   Text then gives each bin's lower edge, its count and a bar; the longest bar is 50 columns, or
//   what the terminal leaves after the edge and count columns.
// mlens compare A B [--tensor NAME] [--json]  (JSON: {"tensors": [...], "overall": pooled figures})
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "cli_job.h"
#include "histogram_png.h"
#include "mlens/analysis/model_error.h"
#include "mlens/analysis/ranged_histogram.h"
#include "mlens/analysis/tensor_compare.h"
#include "mlens/analysis/tensor_report.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/model/model_inputs.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/quant/histogram_range.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "terminal_output.h"

namespace mlens::cli {

namespace {

// The columns of `mlens hist`'s longest bar when the terminal has room for them.
constexpr size_t kLongestHistogramBar = 50;

// Opens TENSOR of the model at `path` (optionally one slice of its slowest dimension) or reports
// why not.
std::optional<TensorView> open_view(const std::string& path, const Model& model, const std::string& name, int64_t expert) {
    auto view = TensorView::open(model, name);
    if (view && expert >= 0) view = view->slice(static_cast<uint64_t>(expert));
    if (!view) {
        fail(path, escape_for_display(name), view.error());
        return std::nullopt;
    }
    return *view;
}

// A figure of the finite values; null when there is none.
nlohmann::json figure_json(const TensorStats& s, double v) { return s.finite ? nlohmann::json(v) : nlohmann::json(nullptr); }

// An integer exactly, as a JSON integer (every value of a 64-bit type fits int64 or uint64).
nlohmann::json integer_json(WideInteger v) {
    if (v < 0) return static_cast<int64_t>(v);
    return static_cast<uint64_t>(v);
}

nlohmann::json stats_json(const TensorStats& s) {
    nlohmann::json p = nlohmann::json::object();
    for (size_t i = 0; i < s.percentiles.size(); ++i) p[number_text(TensorStats::kPercentiles[i])] = figure_json(s, s.percentiles[i]);
    nlohmann::json min = figure_json(s, s.min), max = figure_json(s, s.max);
    if (s.integer_extremes) {
        min = integer_json(s.integer_extremes->min);
        max = integer_json(s.integer_extremes->max);
    }
    return {{"count", s.count},
            {"finite", s.finite},
            {"nan", s.nan},
            {"inf", s.inf},
            {"pos_inf", s.pos_inf},
            {"neg_inf", s.neg_inf},
            {"zeros", s.zeros},
            {"min", min},
            {"max", max},
            {"mean", figure_json(s, s.mean)},
            {"std", figure_json(s, s.std)},
            {"mean_abs", figure_json(s, s.mean_abs)},
            {"kurtosis", figure_json(s, s.kurtosis)},
            {"percentiles", p},
            {"percentile_within", figure_json(s, s.percentile_within)}};
}

// A figure of the finite values as text; "none" when there is none.
std::string figure_text(const TensorStats& s, double v) { return s.finite ? number_text(v) : "none"; }

// min and max as text: integers exactly, every digit.
std::pair<std::string, std::string> extremes_text(const TensorStats& s) {
    if (s.integer_extremes) return {wide_integer_text(s.integer_extremes->min), wide_integer_text(s.integer_extremes->max)};
    return {figure_text(s, s.min), figure_text(s, s.max)};
}

nlohmann::json series_json(const std::vector<SeriesSummary>& series) {
    nlohmann::json out = nlohmann::json::array();
    for (const SeriesSummary& s : series) {
        nlohmann::json entry = stats_json(s.stats);
        entry["name"] = s.name;
        entry["values_per_entry"] = s.values_per_entry;
        entry["stride"] = s.stride;
        out.push_back(std::move(entry));
    }
    return out;
}

void print_series(const std::string& title, const std::vector<SeriesSummary>& series) {
    if (series.empty()) return;
    std::cout << "\n" << title << "\n";
    std::vector<std::vector<std::string>> table = {{"series", "per values", "count", "min", "max", "mean", "std", "zeros"}};
    for (const SeriesSummary& s : series) {
        const TensorStats& t = s.stats;
        table.push_back({s.name + (s.stride > 1 ? " (1 block in " + std::to_string(s.stride) + ")" : ""),
                         std::to_string(s.values_per_entry), std::to_string(t.count), figure_text(t, t.min), figure_text(t, t.max),
                         figure_text(t, t.mean), figure_text(t, t.std), std::to_string(t.zeros)});
    }
    print_table(table);
}

void add_stats(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("stats", "Statistics of one dequantized tensor");
    auto path = std::make_shared<std::string>();
    auto tensor = std::make_shared<std::string>();
    auto expert = std::make_shared<int64_t>(-1);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_option("TENSOR", *tensor, "Tensor name")->required();
    cmd->add_option("--expert", *expert, "Only this index of the slowest dimension (one expert)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        exit_code = kExitBroken;
        auto model = open_or_report(*path);
        if (!model) return;
        auto view = open_view(*path, *model, *tensor, *expert);
        if (!view || !within_download_limit(*path, *model, {&view->info()}, exit_code)) return;
        auto report = [&]() -> Result<TensorReport> {
            CliJob progress("statistics");
            TensorReportOptions options;
            options.on_step = [&](TensorReportStep step) {
                if (step == TensorReportStep::row_series) progress.step("row series");
                if (step == TensorReportStep::block_scales) progress.step("block scales");
                if (step == TensorReportStep::series_statistics) progress.step("series");
            };
            auto r = tensor_report(*view, options, progress.job());
            // A type without block scales has none to show; any other failure to read them is the command's.
            if (r && r->block_scales_error && r->block_scales_error->code != ErrorCode::E_UNSUPPORTED_TYPE) return *r->block_scales_error;
            return r;
        }();
        if (!report) {
            fail(*path, escape_for_display(*tensor), report.error());
            return;
        }
        const TensorStats& s = *report->stats;
        exit_code = exit_status_of(*model);
        if (*json) {
            nlohmann::json out = {{"name", *tensor},
                                  {"type", view->type_name()},
                                  {"shape", shape_in_order(view->shape(), shape_order(model->format))},
                                  {"shape_order", shape_order_name(shape_order(model->format))},
                                  {"expert", *expert >= 0 ? nlohmann::json(*expert) : nlohmann::json(nullptr)}};
            out.update(stats_json(s));
            out["route"] = stats_route_name(*report->stats_route);
            out["block_scales"] = series_json(report->block_scales);
            out["rows"] = series_json(report->rows);
            print_json_result(out);
            return;
        }
        const auto [min, max] = extremes_text(s);
        std::vector<std::vector<std::string>> rows = {
            {"tensor", escape_for_display(*tensor)},
            {"type", view->type_name()},
            {shape_header("shape", shape_order(model->format)),
             shape_text(view->shape(), ShapeStyle::bracketed, shape_order(model->format))},
            {"count", std::to_string(s.count)},
            {"min", min},
            {"max", max},
            {"mean", figure_text(s, s.mean)},
            {"std", figure_text(s, s.std)},
            {"mean |x|", figure_text(s, s.mean_abs)},
            {"zeros", std::to_string(s.zeros)},
            {"nan / +inf / -inf", std::to_string(s.nan) + " / " + std::to_string(s.pos_inf) + " / " + std::to_string(s.neg_inf)},
            {"kurtosis", figure_text(s, s.kurtosis)},
            {"route", std::string(stats_route_name(*report->stats_route)) + ": " + stats_route_summary(*report->stats_route)}};
        if (s.finite) rows.push_back({"percentiles", "each within \xC2\xB1" + number_text(s.percentile_within) + " of the exact one"});
        for (size_t i = 0; i < s.percentiles.size(); ++i)
            rows.push_back({"p" + number_text(TensorStats::kPercentiles[i]), figure_text(s, s.percentiles[i])});
        print_table(rows, 0);
        print_series("block scales", report->block_scales);
        print_series("rows", report->rows);
    });
}

std::string hist_csv(const Histogram& h) {
    std::string out = "bin_lo,bin_hi,count\n";
    for (size_t b = 0; b < h.counts.size(); ++b)
        out += number_text(h.lo + b * h.bin_width(), "%.9g") + "," + number_text(h.lo + (b + 1) * h.bin_width(), "%.9g") + "," +
            std::to_string(h.counts[b]) + "\n";
    return out;
}

// Writes the PNG and/or the CSV as one operation: never over the model's files, never both to
// the same file, both or neither. Returns the exit code.
int write_hist_files(const Model& model, const Histogram& h, const std::string& title, const std::string& range_caption, bool log_counts,
                     const std::string& png_path, const std::string& csv_path) {
    std::vector<uint8_t> png;
    std::string csv;
    std::vector<OutputBytes> files;
    if (!png_path.empty()) {
        auto drawn = histogram_png(h, title, range_caption, log_counts);
        if (!drawn) return fail(png_path, "cannot draw the PNG", drawn.error());
        png = std::move(*drawn);
        files.push_back({png_path, png.data(), png.size()});
    }
    if (!csv_path.empty()) {
        csv = hist_csv(h);
        files.push_back({csv_path, csv.data(), csv.size()});
    }
    OutputGuard guard = output_guard_for(model);
    if (Status s = write_files_safely(guard, files); !s)
        return fail(files.size() == 1 ? files[0].path : std::string(), "cannot write", s.error());
    return kExitOk;
}

// The range of `mlens hist`'s text and PNG: its ends, the mode asked for and the one it resolved
// to in the words of --range-mode and of JSON's "range_mode" and "range_resolved".
std::string range_line(const Histogram& h, const HistogramRange& chosen) {
    return "range " + number_text(h.lo) + " .. " + number_text(h.hi) + " (" + range_mode_words(chosen) + ")";
}

void add_hist(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("hist", "Histogram of one dequantized tensor");
    auto path = std::make_shared<std::string>();
    auto tensor = std::make_shared<std::string>();
    auto bins = std::make_shared<uint32_t>(64);
    auto range = std::make_shared<std::vector<double>>();
    auto range_mode = std::make_shared<std::string>("auto");
    auto csv = std::make_shared<std::string>();
    auto png = std::make_shared<std::string>();
    auto log_counts = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_option("TENSOR", *tensor, "Tensor name")->required();
    cmd->add_option("--png", *png, "Write the histogram as a PNG to this file");
    cmd->add_flag("--log", *log_counts, "PNG bar heights on a log scale");
    cmd->add_option("--bins", *bins, "Number of bins (default 64)")->check(CLI::Range(1u, 1u << 20));
    cmd->add_option("--range", *range, "LO HI: custom histogram range")->expected(2);
    cmd->add_option("--range-mode", *range_mode,
                    "auto (default: p0.1..p99.9 widened when outliers exist, else min..max), full, p999 or symmetric")
        ->check(CLI::IsMember({"auto", "full", "p999", "symmetric"}));
    cmd->add_option("--csv", *csv, "Write bin_lo,bin_hi,count rows to this file");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        if (range->size() == 2 && !(std::isfinite((*range)[0]) && std::isfinite((*range)[1]) && (*range)[0] < (*range)[1])) {
            exit_code = usage_error("--range LO HI needs finite numbers with LO < HI, got " + number_text((*range)[0]) + " " +
                                    number_text((*range)[1]));
            return;
        }
        exit_code = kExitBroken;
        auto model = open_or_report(*path);
        if (!model) return;
        auto view = open_view(*path, *model, *tensor, -1);
        if (!view || !within_download_limit(*path, *model, {&view->info()}, exit_code)) return;
        RangedHistogramRequest request{*bins, *range_mode_from_name(*range_mode), std::nullopt};
        if (range->size() == 2) request.custom = std::make_pair((*range)[0], (*range)[1]);
        std::optional<TensorStats> stats;
        if (range_needs_statistics(request)) {
            auto computed = [&] {
                CliJob progress("statistics");
                return compute_stats(*view, progress.job());
            }();
            if (!computed) {
                fail(*path, escape_for_display(*tensor), computed.error());
                return;
            }
            stats = std::move(computed).value();
        }
        auto ranged = [&] {
            CliJob progress("histogram");
            return ranged_histogram(*view, request, stats ? &*stats : nullptr, nullptr, progress.job());
        }();
        if (!ranged) {
            fail(*path, escape_for_display(*tensor), ranged.error());
            return;
        }
        const Histogram* h = &ranged->histogram;
        const HistogramRange& chosen = ranged->range;
        // The files first: the output, text or JSON, then says what was written.
        std::vector<std::string> written;
        if (!png->empty() || !csv->empty()) {
            // The title names what the picture is of once it is away from the command line.
            const std::string title = std::filesystem::path(*path).filename().string() + " \xC2\xB7 " + *tensor + " \xC2\xB7 " +
                view->type_name();
            if (int status = write_hist_files(*model, *h, escape_for_display(title, 200), range_line(*h, chosen), *log_counts, *png, *csv);
                status != kExitOk) {
                exit_code = status;
                return;
            }
            for (const std::string* file : {png.get(), csv.get()})
                if (!file->empty()) written.push_back(*file);
        }
        exit_code = exit_status_of(*model);
        if (*json) {
            nlohmann::json out = {{"range_mode", range_mode_name(chosen.mode)},
                                  {"range_resolved", range_mode_name(chosen.resolved)},
                                  {"lo", h->lo},
                                  {"hi", h->hi},
                                  {"below", h->below},
                                  {"above", h->above},
                                  {"counts", h->counts},
                                  {"files", written}};
            print_json_result(out);
            return;
        }
        for (const std::string& file : written) std::cout << "wrote " << escape_for_display(file) << "\n";
        std::cout << range_line(*h, chosen) << "; below: " << h->below << ", above: " << h->above << "\n";
        uint64_t peak = 1;
        for (uint64_t c : h->counts) peak = std::max(peak, c);
        std::vector<std::string> labels;
        size_t widest_label = 0;
        char numbers[64];
        for (size_t b = 0; b < h->counts.size(); ++b) {
            std::snprintf(numbers, sizeof numbers, "%12s %10llu ", number_text(h->lo + b * h->bin_width()).c_str(),
                          static_cast<unsigned long long>(h->counts[b]));
            labels.emplace_back(numbers);
            widest_label = std::max(widest_label, labels.back().size());
        }
        // The longest bar takes kLongestHistogramBar columns, fewer when the terminal leaves less room
        // after the bin and count columns.
        const size_t columns = terminal_columns();
        const uint64_t longest_bar = std::min<size_t>(kLongestHistogramBar, columns > widest_label ? columns - widest_label : 0);
        for (size_t b = 0; b < h->counts.size(); ++b) std::cout << labels[b] << std::string(h->counts[b] * longest_bar / peak, '#') << "\n";
    });
}

nlohmann::json comparison_json(const std::string& name, const TensorComparison& c) {
    nlohmann::json rows = nlohmann::json::array();
    for (const RowError& r : c.worst_rows) rows.push_back({{"row", r.row}, {"rmse", r.rmse}, {"max_abs", r.max_abs}});
    nlohmann::json blocks = nlohmann::json::array();
    for (const BlockError& b : c.worst_blocks)
        blocks.push_back({{"block", b.block}, {"row", b.row}, {"column", b.column}, {"rmse", b.rmse}, {"max_abs", b.max_abs}});
    return {{"tensor", name},
            {"count", c.count},
            {"nonfinite", c.nonfinite},
            {"rmse", c.rmse},
            {"nmse", json_number(c.nmse)},
            {"max_abs", c.max_abs},
            {"mean_abs", c.mean_abs},
            {"cosine", c.cosine},
            {"snr_db", json_number(c.snr_db)},
            {"worst_rows", rows},
            {"block_length", c.block_length},
            {"worst_blocks", blocks}};
}

// Figures of unrelated weights look like a broken quantization: say when the models differ in
// architecture, or (`pairing` given) in their tensor sets.
void warn_if_unlike(const Model& a, const Model& b, const Pairing* pairing) {
    const std::string arch_a = summarize(a).architecture, arch_b = summarize(b).architecture;
    if (arch_a != arch_b)
        std::cerr << "warning: the architectures differ: A is " << (arch_a.empty() ? "unnamed" : escape_for_display(arch_a)) << ", B is "
                  << (arch_b.empty() ? "unnamed" : escape_for_display(arch_b)) << "; the figures compare unrelated weights\n";
    if (pairing && (!pairing->only_a.empty() || !pairing->only_b.empty()))
        std::cerr << "warning: the tensor sets differ: " << plural(pairing->only_a.size(), "tensor") << " only in A, "
                  << pairing->only_b.size() << " only in B (mlens diff lists them)\n";
}

void print_overall(const OverallError& o) {
    const ErrorFigures& f = o.figures;
    std::cout << "overall (" << plural(o.tensors, "tensor") << ", " << plural(o.sums.count, "value") << " pooled): RMSE "
              << number_text(f.rmse) << "  NMSE " << number_text(f.nmse) << "  cosine " << cosine_text(f.cosine) << "  SNR "
              << number_text(f.snr_db) << " dB\n";
}

void print_worst(const TensorComparison& c) {
    if (!c.worst_rows.empty()) {
        std::cout << "worst rows\n";
        std::vector<std::vector<std::string>> rows = {{"ROW", "RMSE", "MAX|E|"}};
        for (const RowError& r : c.worst_rows) rows.push_back({std::to_string(r.row), number_text(r.rmse), number_text(r.max_abs)});
        print_table(rows);
    }
    if (!c.worst_blocks.empty()) {
        std::cout << "worst blocks of " << c.block_length << " values\n";
        std::vector<std::vector<std::string>> rows = {{"BLOCK", "ROW", "COLUMN", "RMSE", "MAX|E|"}};
        for (const BlockError& b : c.worst_blocks)
            rows.push_back(
                {std::to_string(b.block), std::to_string(b.row), std::to_string(b.column), number_text(b.rmse), number_text(b.max_abs)});
        print_table(rows);
    }
}

void add_compare(CLI::App& app, int& exit_code) {
    auto* cmd =
        app.add_subcommand("compare", "Error of B against reference A, per tensor paired by name (HF names aligned with GGUF ones)");
    auto a_path = std::make_shared<std::string>();
    auto b_path = std::make_shared<std::string>();
    auto only = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("A", *a_path, "Reference model")->required();
    cmd->add_option("B", *b_path, "Candidate model")->required();
    cmd->add_option("--tensor", *only, "Compare only this tensor, and print its worst rows and blocks");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        exit_code = kExitBroken;
        std::optional<Model> a, b;
        if (!open_both(*a_path, *b_path, a, b)) return;
        // Pairs by name, through the HF→GGUF map when one side is a Hugging Face checkpoint and
        // the other its GGUF conversion (values transformed as the converter does).
        std::optional<NameAlignment> aligned = automatic_name_alignment(*a, *b);
        Pairing pairing = aligned ? pair_tensors(*a, *b, aligned->map, aligned->side) : pair_tensors(*a, *b);
        if (!only->empty())
            std::erase_if(pairing.pairs, [&](const TensorPair& p) {
                return a->tensors[p.a.tensor].name != *only && b->tensors[p.b.tensor].name != *only;
            });
        auto compared = [&] {
            CliJob progress("compare");
            return compare_models(*a, *b, pairing, progress.job());
        }();
        if (!compared) {
            fail("", compared.error());
            return;
        }
        nlohmann::json out = nlohmann::json::array();
        std::vector<std::vector<std::string>> rows = {{"TENSOR", "TYPES", "RMSE", "NMSE", "MAX|E|", "COSINE", "SNR dB"}};
        // A pair whose data could not be read leaves the comparison incomplete: its error on
        // stderr and exit status 1, beside the result; a pair that cannot be compared at all
        // (types, element counts) is skipped with its reason.
        int read_failure = kExitOk;
        for (const TensorError& t : compared->tensors) {
            if (t.read_error) {
                read_failure = fail(t.read_error_path, t.name_a, *t.read_error);
                continue;
            }
            if (!t.error) {
                std::cerr << "skipped " << escape_for_display(t.name_a) << ": " << escape_for_display(t.failed) << "\n";
                continue;
            }
            nlohmann::json j = comparison_json(t.name_a, *t.error);
            std::string name = escape_for_display(t.name_a);
            if (t.name_b != t.name_a) {
                j["tensor_b"] = t.name_b;
                name += " \xE2\x86\x92 " + escape_for_display(t.name_b);
            }
            out.push_back(std::move(j));
            const TensorComparison& c = *t.error;
            rows.push_back({name, t.type_a + "\xE2\x86\x92" + t.type_b, number_text(c.rmse), number_text(c.nmse), number_text(c.max_abs),
                            cosine_text(c.cosine), number_text(c.snr_db)});
        }
        warn_if_unlike(*a, *b, only->empty() ? &pairing : nullptr);
        if (out.empty()) {
            if (read_failure == kExitOk)
                fail("", ErrorCode::E_NOT_FOUND,
                     "no tensor of the same name and size in " + escape_for_display(shown_path(*a_path)) + " and " + escape_for_display(shown_path(*b_path)));
            return;
        }
        exit_code = std::max({exit_status_of(*a), exit_status_of(*b), read_failure});
        if (*json) {
            const OverallError& o = compared->overall;
            print_json_result({{"tensors", out},
                                    {"overall",
                                     {{"tensors", o.tensors},
                                      {"count", o.sums.count},
                                      {"rmse", json_number(o.figures.rmse)},
                                      {"nmse", json_number(o.figures.nmse)},
                                      {"cosine", json_number(o.figures.cosine)},
                                 {"snr_db", json_number(o.figures.snr_db)}}}});
            return;
        }
        if (aligned) std::cout << "tensor names aligned by " << aligned->label << "\n";
        print_table(rows);
        print_overall(compared->overall);
        if (!only->empty())
            for (const TensorError& t : compared->tensors)
                if (t.error) print_worst(*t.error);
    });
}

}  // namespace

void add_quant_commands(CLI::App& app, int& exit_code) {
    add_stats(app, exit_code);
    add_hist(app, exit_code);
    add_compare(app, exit_code);
}

}  // namespace mlens::cli
