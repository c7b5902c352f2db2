// mlens requant PATH TENSOR [--types T1,T2,...] [--expert N] [--reference FILE] [--imatrix FILE] [--json]
// Quantizes the best reference for the tensor (requant_reference.h) with ggml to each type and
// prints the error against it; with an importance matrix, as llama-quantize --imatrix does. A type
// whose requantized values equal the reference's (RequantRow::equals_reference) says so instead of
// a perfect score.
#include <cmath>
#include <iostream>

#include "cli_common.h"
#include "cli_job.h"
#include "mlens/analysis/requant.h"
#include "mlens/analysis/requant_reference.h"
#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/model/model_json.h"
#include "mlens/open/imatrix_input.h"
#include "mlens/quant/imatrix.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"
#include "mlens/text/nearest_name.h"
#include "mlens/text/number_format.h"

namespace mlens::cli {

namespace {

nlohmann::json row_json(const RequantRow& r) {
    nlohmann::json j = {{"type", r.type_name}, {"bits_per_weight", r.bits_per_weight}, {"needs_imatrix", r.needs_imatrix}};
    if (!r.skipped.empty()) j["skipped"] = r.skipped;
    if (r.needs_imatrix || !r.skipped.empty()) return j;
    j["with_imatrix"] = r.with_importance;
    j["equals_reference"] = r.equals_reference();
    j["rmse"] = r.error.rmse;
    j["nmse"] = json_number(r.error.nmse);
    j["max_abs"] = r.error.max_abs;
    j["mean_abs"] = r.error.mean_abs;
    j["cosine"] = r.error.cosine;
    j["snr_db"] = json_number(r.error.snr_db);
    return j;
}

struct Options {
    std::string path, tensor, reference, imatrix;
    std::vector<std::string> types;
    int64_t expert = -1;
    bool json = false;
};

// The names of the types requant can make, for "did you mean" hints.
std::vector<std::string> requant_type_names() {
    std::vector<std::string> names;
    for (const GgmlTypeRow& row : ggml_type_rows())
        if (row.requant) names.push_back(std::string(row.name));
    return names;
}

int run_requant(const Options& o) {
    std::vector<uint32_t> ids;
    for (const std::string& t : o.types) {
        auto id = ggml_type_from_name(t);
        if (!id) return usage_error("unknown ggml type " + escape_for_display(t) + did_you_mean(t, requant_type_names()));
        ids.push_back(*id);
    }
    auto model = open_or_report(o.path);
    if (!model) return kExitBroken;
    std::optional<Model> other;
    if (!o.reference.empty() && !(other = open_or_report(o.reference))) return kExitBroken;
    const TensorInfo* info = model->find_tensor(o.tensor);
    if (!info)
        return fail(o.path, ErrorCode::E_NOT_FOUND,
                    escape_for_display(o.tensor) + ": no such tensor in " + escape_for_display(shown_path(o.path)) + did_you_mean(o.tensor, model->tensor_names()));
    const size_t index = static_cast<size_t>(info - model->tensors.data());
    const std::optional<uint64_t> expert = o.expert >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(o.expert)) : std::nullopt;
    Result<RequantReference> reference = open_requant_reference(*model, index, expert, other ? &*other : nullptr);
    if (!reference) return fail(o.reference.empty() ? o.path : o.reference, escape_for_display(o.tensor), reference.error());
    const FloatSource& values = reference->values->source();
    const uint64_t row_length = reference->values->view().row_length();
    std::optional<Imatrix> imatrix;
    std::optional<ColumnImportance> importance;
    if (!o.imatrix.empty()) {
        Result<Imatrix> opened = open_imatrix_input(o.imatrix);
        if (!opened) return fail(o.imatrix, opened.error());
        imatrix = std::move(*opened);
        Result<ColumnImportance> found =
            importance_for(*imatrix, info->name, row_length, values.size() / std::max<uint64_t>(row_length, 1), expert);
        // As llama-quantize does, a tensor the matrix has no entry for is quantized without one.
        if (!found && found.error().code == ErrorCode::E_NOT_FOUND)
            std::cerr << "note: " << escape_for_display(o.imatrix) << " has no entry for " << escape_for_display(info->name)
                      << ": requantized without importance, as llama-quantize does\n";
        else if (!found)
            return fail(o.imatrix, found.error().code, found.error().message);
        else
            importance = std::move(*found);
    }
    if (ids.empty()) ids = default_requant_types(row_length, importance.has_value());
    auto rows = [&] {
        CliJob progress("requantize");
        return requantize(values, row_length, ids, progress.job(), 0, importance ? &*importance : nullptr);
    }();
    if (!rows) return fail(o.path, escape_for_display(o.tensor), rows.error());
    const std::string reference_file = shown_path(reference->counterpart ? o.reference : o.path);
    // Errors in either file were reported on stderr: the figures still print, the status says so.
    const int status = other && exit_status_of(*other) != kExitOk ? kExitBroken : exit_status_of(*model);
    if (o.json) {
        nlohmann::json out = {{"tensor", o.tensor},
                              {"reference_type", reference->type_name},
                              {"reference",
                               {{"source", reference->counterpart ? "counterpart" : "self"},
                                {"file", reference_file},
                                {"tensor", reference->tensor_name},
                                {"type", reference->type_name}}},
                              {"row_length", row_length},
                              {"types", nlohmann::json::array()}};
        if (!reference->note.empty()) out["note"] = reference->note;
        if (importance)
            out["imatrix"] = {{"file", shown_path(o.imatrix)}, {"format", imatrix_format_name(imatrix->format)}, {"entry", importance->entry}};
        for (const RequantRow& r : *rows) out["types"].push_back(row_json(r));
        print_json_result(out);
        return status;
    }
    // A type without figures (or whose values equal the reference's) shows dashes and says why in
    // NOTE, so the figure columns stay narrow.
    std::vector<std::vector<std::string>> table = {{"TYPE", "BPW", "RMSE", "NMSE", "MAX|E|", "COSINE", "SNR dB", "NOTE"}};
    for (const RequantRow& r : *rows) {
        std::vector<std::string> line = {r.type_name, bits_per_weight_text(r.bits_per_weight)};
        const std::string note = r.needs_imatrix ? "needs an importance matrix (--imatrix FILE)"
            : !r.skipped.empty()                 ? "skipped: " + r.skipped
            : r.equals_reference()               ? "same values as the reference"
                                                 : "";
        for (double v : {r.error.rmse, r.error.nmse, r.error.max_abs}) line.push_back(note.empty() ? number_text(v) : "-");
        line.push_back(note.empty() ? cosine_text(r.error.cosine) : "-");
        line.push_back(note.empty() ? number_text(r.error.snr_db) : "-");
        line.push_back(note);
        table.push_back(std::move(line));
    }
    std::cout << "reference " << escape_for_display(reference->tensor_name) << " (" << escape_for_display(reference->type_name) << ") in "
              << escape_for_display(reference_file) << "\n";
    if (!reference->note.empty()) std::cout << "note: " << escape_for_display(reference->note) << "\n";
    if (importance)
        std::cout << "importance matrix " << escape_for_display(shown_path(o.imatrix)) << " (" << imatrix_format_name(imatrix->format) << "), entry "
                  << escape_for_display(importance->entry) << "\n";
    if (rows->empty())
        std::cout << "no ggml type splits rows of " << row_length << " values into whole blocks\n";
    else
        print_table(table);
    return status;
}

}  // namespace

void add_requant_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("requant", "Error of requantizing one tensor to other ggml types");
    auto o = std::make_shared<Options>();
    cmd->add_option("PATH", o->path, "Model file")->required();
    cmd->add_option("TENSOR", o->tensor, "Tensor name")->required();
    cmd->add_option("--types", o->types,
                    "Comma-separated ggml types, e.g. Q4_0,Q4_K,Q8_0 (default: the common types whose blocks split the tensor's rows)")
        ->delimiter(',');
    cmd->add_option("--expert", o->expert, "Only this index of the slowest dimension (one expert)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--reference", o->reference,
                    "The F32/F16/BF16 model this one was quantized from: its tensor is the reference (default: this tensor)");
    cmd->add_option("--imatrix", o->imatrix, "llama-imatrix importance matrix (GGUF or legacy .dat) to quantize with");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->callback([o, &exit_code] { exit_code = run_requant(*o); });
}

}  // namespace mlens::cli
