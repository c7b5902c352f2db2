// mlens imatrix PATH [--tensor NAME] [--bins N] [--statistics] [--json]
// A llama-imatrix importance matrix (GGUF or legacy .dat): per tensor its activation statistics
// and coverage; with --tensor, per expert, and the histogram of log10 of its column importances;
// with --statistics, the tables of `llama-imatrix --show-statistics` (imatrix_statistics.h) in its
// own row format, so the two can be compared line by line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli_common.h"
#include "cli_job.h"
#include "mlens/model/model_json.h"
#include "mlens/open/imatrix_input.h"
#include "mlens/quant/imatrix.h"
#include "mlens/quant/imatrix_statistics.h"
#include "mlens/text/escape.h"
#include "mlens/text/nearest_name.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

struct Options {
    std::string path, tensor;
    uint32_t bins = 16;
    bool json = false, statistics = false;
};

std::vector<std::string> entry_names(const Imatrix& m) {
    std::vector<std::string> names;
    for (const ImatrixEntry& e : m.entries) names.push_back(e.name);
    return names;
}

double total_count(const ImatrixEntry& e) {
    double total = 0;
    for (double c : e.counts) total += c;
    return e.counts.size() == 1 ? e.counts[0] * static_cast<double>(e.experts) : total;
}

nlohmann::json entry_json(const ImatrixEntry& e, const ImatrixEntrySummary& s) {
    double sum = 0;
    for (const ImatrixExpertSummary& x : s.experts) sum += x.sum;
    return {{"name", e.name},
            {"columns", e.columns},
            {"experts", e.experts},
            {"counts", e.counts},
            {"sum", sum},
            {"mean_importance", json_number(s.mean_importance)},
            {"min_importance", json_number(s.min_importance)},
            {"max_importance", json_number(s.max_importance)},
            {"zero_columns", s.zero_columns},
            {"inactive_experts", s.inactive_experts}};
}

// One line per bin: its range of log10 importance, count and a bar.
void print_histogram(const Histogram& h, uint64_t zero) {
    uint64_t most = 1;
    for (uint64_t c : h.counts) most = std::max(most, c);
    std::vector<std::vector<std::string>> rows = {{"LOG10 FROM", "TO", "COLUMNS", ""}};
    for (size_t b = 0; b < h.counts.size(); ++b) {
        const double lo = h.lo + h.bin_width() * static_cast<double>(b);
        rows.push_back({number_text(lo, "%.3f"), number_text(lo + h.bin_width(), "%.3f"), std::to_string(h.counts[b]),
                        std::string(static_cast<size_t>(40.0 * static_cast<double>(h.counts[b]) / static_cast<double>(most) + 0.5), '#')});
    }
    print_table(rows);
    if (zero) std::cout << zero << " activated columns with importance 0 are not in the histogram\n";
}

nlohmann::json statistics_json(const ImatrixStatistics& s) {
    nlohmann::json tensors = nlohmann::json::array(), layers = nlohmann::json::array();
    for (const ImatrixTensorStatistics& t : s.tensors)
        tensors.push_back({{"tensor", t.tensor},
                           {"layer", t.layer},
                           {"kind", t.kind},
                           {"sum_act2", json_number(t.sum)},
                           {"min", json_number(t.min)},
                           {"max", json_number(t.max)},
                           {"mean", json_number(t.mean)},
                           {"stddev", json_number(t.stddev)},
                           {"active", json_number(t.active)},
                           {"elements", t.elements},
                           {"entropy", json_number(t.entropy)},
                           {"entropy_norm", json_number(t.entropy_norm)},
                           {"zd", json_number(t.zd)},
                           {"cossim", json_number(t.cossim)}});
    for (const ImatrixLayerStatistics& l : s.layers)
        layers.push_back(
            {{"layer", l.layer}, {"mean_sum_act2", json_number(l.mean_sum)}, {"zd", json_number(l.zd)}, {"cossim", json_number(l.cossim)}});
    return {{"tensors", tensors}, {"layers", layers}, {"without_activations", s.without_activations}};
}

// llama-imatrix --show-statistics' two tables, row for row in its printf formats.
void print_statistics(const ImatrixStatistics& s) {
    std::cout.flush();  // printf writes around std::cout's line fitting
    std::printf("\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", " Layer", "       Tensor", "          Σ(Act²)", "  Min",
                "            Max", "           μ", "   σ", " % Active", "N", "   Entropy", "E (norm)", "ZD", "  CosSim");
    for (const ImatrixTensorStatistics& t : s.tensors)
        std::printf("%5s\t%-20s\t%10.2f\t%8.4f\t%11.4f\t%6.2f\t%6.2f\t%8.2f%%\t%6d\t%10.4f\t%6.2f%%\t%10.2f%%\t%8.4f\n",
                    escape_for_display(t.layer, 40).c_str(), escape_for_display(t.kind, 80).c_str(), t.sum, t.min, t.max, t.mean, t.stddev,
                    t.active * 100.0f, t.elements, t.entropy, t.entropy_norm, 100.0f * t.zd, t.cossim);
    std::printf("\nweighted averages per layer (%zu layers)\n\n%s\t%s\t%s\t%s\n", s.layers.size(), "  Layer", "     μΣ(Act²)", "      μZD",
                "μCosSim");
    for (const ImatrixLayerStatistics& l : s.layers)
        std::printf("%5d\t%14.2f\t%10.4f%%\t%6.4f\n", l.layer, l.mean_sum, 100.0f * l.zd, l.cossim);
    for (const std::string& name : s.without_activations)
        std::printf("%s: no activations (every count is 0)\n", escape_for_display(name).c_str());
    std::fflush(stdout);
}

int run_imatrix(const Options& o) {
    Result<Imatrix> opened = open_imatrix_input(o.path);
    if (!opened) return fail(o.path, opened.error());
    const Imatrix& m = *opened;
    const ImatrixEntry* only = nullptr;
    if (!o.tensor.empty() && !(only = m.find(o.tensor)))
        return fail(o.path, ErrorCode::E_NOT_FOUND,
                    escape_for_display(shown_path(o.path)) + " has no entry " + escape_for_display(o.tensor) + did_you_mean(o.tensor, entry_names(m)));
    std::vector<const ImatrixEntry*> entries;
    if (only)
        entries.push_back(only);
    else
        for (const ImatrixEntry& e : m.entries) entries.push_back(&e);
    std::vector<ImatrixEntrySummary> summaries;
    CliJob progress("imatrix");
    for (const ImatrixEntry* e : entries) {
        Result<ImatrixEntrySummary> s = summarize_entry(m, *e, std::max<uint32_t>(1, o.bins), progress.job());
        if (!s) return fail(o.path, escape_for_display(e->name), s.error());
        summaries.push_back(std::move(*s));
    }
    std::optional<ImatrixStatistics> statistics;
    if (o.statistics) {
        auto s = imatrix_statistics(m, progress.job());
        if (!s) return fail(o.path, s.error());
        statistics = std::move(*s);
    }
    const char* count_unit = m.format == ImatrixFormat::gguf ? "tokens" : "calls";
    if (o.json) {
        nlohmann::json out = {{"file", shown_path(o.path)},
                              {"format", imatrix_format_name(m.format)},
                              {"count_unit", count_unit},
                              {"datasets", m.datasets},
                              {"entries", nlohmann::json::array()}};
        if (m.chunk_count) out["chunk_count"] = *m.chunk_count;
        if (m.chunk_size) out["chunk_size"] = *m.chunk_size;
        for (size_t i = 0; i < entries.size(); ++i) out["entries"].push_back(entry_json(*entries[i], summaries[i]));
        if (only) {
            nlohmann::json experts = nlohmann::json::array();
            for (const ImatrixExpertSummary& x : summaries[0].experts)
                experts.push_back({{"count", x.count}, {"sum", x.sum}, {"zero_columns", x.zero_columns}});
            const Histogram& h = summaries[0].log10_importance;
            out["tensor"] = {{"name", only->name},
                             {"experts", experts},
                             {"log10_importance", {{"lo", h.lo}, {"hi", h.hi}, {"counts", h.counts}}},
                             {"zero_importance", summaries[0].zero_importance}};
        }
        if (statistics) out["statistics"] = statistics_json(*statistics);
        print_json_result(out);
        return kExitOk;
    }
    std::cout << "importance matrix " << escape_for_display(shown_path(o.path)) << ": " << imatrix_format_name(m.format) << ", " << plural(m.entries.size(), "entry", "entries");
    if (m.chunk_count) std::cout << ", " << plural(*m.chunk_count, "chunk");
    if (m.chunk_size) std::cout << " of " << plural(*m.chunk_size, "token");
    std::cout << "\n";
    for (const std::string& d : m.datasets) std::cout << "dataset " << escape_for_display(d) << "\n";
    std::vector<std::vector<std::string>> table = {
        {"TENSOR", "COLUMNS", "EXPERTS", std::string("COUNT (") + count_unit + ")", "MEAN", "MIN", "MAX", "ZERO COLS", "INACTIVE"}};
    for (size_t i = 0; i < entries.size(); ++i) {
        const ImatrixEntry& e = *entries[i];
        const ImatrixEntrySummary& s = summaries[i];
        table.push_back({escape_for_display(e.name), std::to_string(e.columns), std::to_string(e.experts),
                         number_text(total_count(e), "%.10g"), number_text(s.mean_importance, "%.4g"),
                         number_text(s.min_importance, "%.4g"), number_text(s.max_importance, "%.4g"), std::to_string(s.zero_columns),
                         e.experts > 1 || s.inactive_experts ? std::to_string(s.inactive_experts) : "-"});
    }
    print_table(table);
    if (statistics) {
        std::cout << std::flush;
        print_statistics(*statistics);
    }
    if (!only) return kExitOk;
    if (only->experts > 1) {
        std::vector<std::vector<std::string>> per = {{"EXPERT", std::string("COUNT (") + count_unit + ")", "SUM", "ZERO COLS"}};
        for (size_t x = 0; x < summaries[0].experts.size(); ++x) {
            const ImatrixExpertSummary& s = summaries[0].experts[x];
            per.push_back({std::to_string(x), number_text(s.count, "%.10g"), number_text(s.sum, "%.6g"), std::to_string(s.zero_columns)});
        }
        std::cout << "\n";
        print_table(per);
    }
    std::cout << "\nlog10 of each activated column's importance (mean squared activation)\n";
    print_histogram(summaries[0].log10_importance, summaries[0].zero_importance);
    return kExitOk;
}

}  // namespace

void add_imatrix_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("imatrix", "A llama-imatrix importance matrix: activation statistics per tensor and expert");
    auto o = std::make_shared<Options>();
    cmd->add_option("PATH", o->path, "Importance matrix file (GGUF or legacy .dat)")->required();
    cmd->add_option("--tensor", o->tensor, "Only this entry, with its experts and the histogram of its column importances");
    cmd->add_option("--bins", o->bins, "Histogram bins (1 to 1000)")->check(CLI::Range(1, 1000));
    cmd->add_flag("--statistics", o->statistics,
                  "Add llama-imatrix --show-statistics' tables: Σ(Act²), min, max, μ, σ, % active, N, entropy, E (norm), ZD, CosSim "
                  "per tensor, weighted averages per layer");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->callback([o, &exit_code] { exit_code = run_imatrix(*o); });
}

}  // namespace mlens::cli
