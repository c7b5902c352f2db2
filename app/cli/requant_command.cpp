// mlens requant PATH TENSOR --types T1,T2,... [--expert N] [--json]
// Quantizes the decoded tensor with ggml to each type and prints the error against it.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "cli_job.h"
#include "mlens/analysis/requant.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/model/model_json.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

nlohmann::json row_json(const RequantRow& r) {
    nlohmann::json j = {{"type", r.type_name}, {"bits_per_weight", r.bits_per_weight}, {"needs_imatrix", r.needs_imatrix}};
    if (!r.skipped.empty()) j["skipped"] = r.skipped;
    if (r.needs_imatrix || !r.skipped.empty()) return j;
    j["rmse"] = r.error.rmse;
    j["nmse"] = json_number(r.error.nmse);
    j["max_abs"] = r.error.max_abs;
    j["mean_abs"] = r.error.mean_abs;
    j["cosine"] = r.error.cosine;
    j["snr_db"] = json_number(r.error.snr_db);
    return j;
}

}  // namespace

void add_requant_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("requant", "Error of requantizing one tensor to other ggml types");
    auto path = std::make_shared<std::string>();
    auto tensor = std::make_shared<std::string>();
    auto types = std::make_shared<std::vector<std::string>>();
    auto expert = std::make_shared<int64_t>(-1);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_option("TENSOR", *tensor, "Tensor name (the reference, decoded to float)")->required();
    cmd->add_option("--types", *types, "Comma-separated ggml types, e.g. Q4_0,Q4_K,Q8_0")->required()->delimiter(',');
    cmd->add_option("--expert", *expert, "Only this index of the slowest dimension (one expert)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        exit_code = kExitUsage;
        std::vector<uint32_t> ids;
        for (const std::string& t : *types) {
            auto id = ggml_type_from_name(t);
            if (!id) { std::cerr << "error: unknown ggml type " << escape_for_display(t) << "\n"; return; }
            ids.push_back(*id);
        }
        exit_code = kExitBroken;
        auto model = open_or_report(*path);
        if (!model) return;
        auto view = TensorView::open(*model, *tensor);
        if (view && *expert >= 0) view = view->slice(static_cast<uint64_t>(*expert));
        if (!view) { std::cerr << "error: " << escape_for_display(*tensor) << ": " << view.error().to_string() << "\n"; return; }
        auto rows = [&] {
            CliJob progress("requantize");
            return requantize(*view, view->row_length(), ids, progress.job());
        }();
        if (!rows) { std::cerr << "error: " << rows.error().to_string() << "\n"; return; }
        exit_code = exit_status_of(*model);
        if (*json) {
            nlohmann::json out = {{"tensor", *tensor}, {"reference_type", view->type_name()}, {"types", nlohmann::json::array()}};
            for (const RequantRow& r : *rows) out["types"].push_back(row_json(r));
            std::cout << json_text(out) << "\n";
            return;
        }
        // A type without figures shows dashes and says why in NOTE, so the figure columns stay narrow.
        std::vector<std::vector<std::string>> table = {{"TYPE", "BPW", "RMSE", "NMSE", "MAX|E|", "COSINE", "SNR dB", "NOTE"}};
        for (const RequantRow& r : *rows) {
            std::vector<std::string> line = {r.type_name, number_text(r.bits_per_weight, "%.4g")};
            const std::string note = r.needs_imatrix ? "needs an importance matrix" : r.skipped.empty() ? "" : "skipped: " + r.skipped;
            for (double v : {r.error.rmse, r.error.nmse, r.error.max_abs, r.error.cosine, r.error.snr_db})
                line.push_back(note.empty() ? number_text(v) : "-");
            line.push_back(note);
            table.push_back(std::move(line));
        }
        std::cout << "reference " << escape_for_display(*tensor) << " (" << view->type_name() << ")\n";
        print_table(table);
    });
}

}  // namespace mlens::cli
