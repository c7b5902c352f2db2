// mlens export MODEL[:TAG] OUT_DIR [--store PATH] [--format gguf|hf|mlx] [--dtype bf16|f16|f32] [--dry-run] [--json]:
// gets a model out of an Ollama store as a folder other tools load (ollama/store_export.h): the
// files it will write are listed first (names, sizes, what each is), then written, verified and
// placed. --dry-run lists them only. --json prints one object
// (assets/schemas/mlens-export.schema.json).
#include <iostream>

#include "cli_common.h"
#include "cli_job.h"
#include "mlens/model/model_json.h"
#include "mlens/ollama/store_export.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

nlohmann::json plan_json(const StoreExportPlan& plan, bool dry_run, const std::string& out_dir) {
    nlohmann::json formats = nlohmann::json::array();
    for (ExportFormat f : plan.formats) formats.push_back(export_format_name(f));
    nlohmann::json files = nlohmann::json::array();
    for (const ExportFile& f : plan.files)
        files.push_back({{"name", f.name},
                         {"bytes", f.bytes},
                         {"kind", export_file_kind(f.kind).name},
                         {"description", f.description},
                         {"digest", f.digest.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.digest)}});
    return {{"model", plan.reference},
            {"format", export_format_name(plan.format)},
            {"formats", formats},
            {"dtype", plan.format == ExportFormat::hf ? nlohmann::json(hf_dtype_name(plan.hf.dtype)) : nlohmann::json(nullptr)},
            {"out_dir", out_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(out_dir)},
            {"dry_run", dry_run},
            {"total_bytes", plan.total_bytes()},
            {"files", files},
            {"notes", plan.notes},
            {"verification", nullptr}};
}

nlohmann::json verification_json(const StoreExportReport& report, bool hf) {
    nlohmann::json modes = nlohmann::json::array();
    for (const QuantExactness& m : report.verification.modes)
        modes.push_back({{"mode", m.mode},
                         {"tensors", m.tensors},
                         {"values", m.values},
                         {"rounded", m.rounded},
                         {"exact", m.exact()},
                         {"worst_error", json_number(m.worst_error)}});
    return {{"files_verified", report.files_verified},
            {"tensors_checked", hf ? nlohmann::json(report.verification.tensors_checked) : nlohmann::json(nullptr)},
            {"failures", report.verification.failures},
            {"modes", modes}};
}

void print_plan(const StoreExportPlan& plan, const std::string& out_dir) {
    std::cout << "model: " << escape_for_display(plan.reference) << "  format: " << export_format_name(plan.format);
    if (plan.format == ExportFormat::hf) std::cout << "  dtype: " << hf_dtype_name(plan.hf.dtype);
    std::cout << "\n" << (out_dir.empty() ? std::string("would write") : "writes " + escape_for_display(out_dir)) << ":\n";
    std::vector<std::vector<std::string>> rows = {{"FILE", "BYTES", "WHAT"}};
    for (const ExportFile& f : plan.files)
        rows.push_back({escape_for_display(f.name), std::to_string(f.bytes), escape_for_display(f.description)});
    rows.push_back({"total", std::to_string(plan.total_bytes()), ""});
    print_table(rows);
    for (const std::string& n : plan.notes) std::cout << "note: " << escape_for_display(n, 2000) << "\n";
}

struct ExportArgs {
    std::string model, out_dir, store, format, dtype;
    bool dry_run = false, json = false;
};

int run_export(const ExportArgs& args) {
    StoreExportOptions options;
    if (!args.format.empty()) {
        options.format = parse_export_format(args.format);
        if (!options.format) return usage_error("--format must be gguf, hf or mlx");
    }
    if (!args.dtype.empty()) {
        options.dtype = parse_hf_dtype(args.dtype);
        if (!options.dtype) return usage_error("--dtype must be bf16, f16 or f32");
    }
    if (args.out_dir.empty() && !args.dry_run) return usage_error("OUT_DIR is required unless --dry-run");
    std::optional<Store> store;
    ModelName name;
    if (!args.store.empty()) {
        auto opened = Store::open(args.store);
        if (!opened) return fail(args.store, opened.error());
        auto parsed = parse_model_reference(args.model);
        if (!parsed) return usage_error(args.model + ": " + parsed.error().to_string());
        store = std::move(*opened);
        name = *parsed;
    } else {
        Target target = resolve(args.model);
        if (target.kind != TargetKind::store_model)
            return fail(
                args.model, ErrorCode::E_NOT_FOUND,
                "not a model of an Ollama store (" +
                    (target.kind == TargetKind::missing || target.kind == TargetKind::not_a_model ? target.problem.to_string()
                                                                                                  : std::string(target_kind_name(target))) +
                    ")");
        store = std::move(*target.store);
        name = target.name;
    }
    CliJob job("export");
    auto prepared = prepare_store_export(*store, name, options, job.job());
    if (!prepared) return fail(args.model, prepared.error());
    nlohmann::json out = plan_json(prepared->plan, args.dry_run, args.out_dir);
    if (!args.json) print_plan(prepared->plan, args.dry_run ? "" : args.out_dir);
    if (args.dry_run) {
        if (args.json) print_json_result(out);
        return kExitOk;
    }
    job.step("export");
    auto report = write_store_export(*prepared, args.out_dir, job.job());
    if (!report) return fail(args.out_dir, report.error());
    const bool hf = prepared->plan.format == ExportFormat::hf;
    if (args.json) {
        out["verification"] = verification_json(*report, hf);
        print_json_result(out);
        return kExitOk;
    }
    std::cout << "verified: " << plural(report->files_verified, "file");
    if (hf) std::cout << ", " << plural(report->verification.tensors_checked, "tensor") << ", " << plural(report->verification.failures, "failure");
    std::cout << "\n";
    for (const QuantExactness& m : report->verification.modes) {
        std::cout << "  " << m.mode << ": " << plural(m.tensors, "tensor") << " as " << hf_dtype_name(prepared->plan.hf.dtype) << ", ";
        if (m.exact())
            std::cout << "exact\n";
        else
            std::cout << m.rounded << " of " << plural(m.values, "value") << " rounded, worst error " << number_text(m.worst_error, "%.6g") << "\n";
    }
    std::cout << "wrote " << escape_for_display(args.out_dir) << "\n";
    return kExitOk;
}

}  // namespace

void add_export_store_command(CLI::App& app, int& exit_code) {
    auto args = std::make_shared<ExportArgs>();
    auto* cmd =
        app.add_subcommand("export", "Get a model out of an Ollama store: a GGUF bundle, a Hugging Face or an MLX folder, verified");
    cmd->add_option("MODEL", args->model, "Store model: MODEL[:TAG] or STORE/MODEL[:TAG]")->required();
    cmd->add_option("OUT_DIR", args->out_dir, "Write the export into this folder (new, or empty)");
    cmd->add_option("--store", args->store, "Store root (default: the Ollama stores found)");
    cmd->add_option("--format", args->format, "gguf (GGUF-backed models); hf (the default) or mlx (tensor-blob models)");
    cmd->add_option("--dtype", args->dtype, "hf: bf16, f16 or f32 (default: config.json's torch_dtype, else bf16)");
    cmd->add_flag("--dry-run", args->dry_run, "List the files the export would write, write nothing");
    cmd->add_flag("--json", args->json, "Print the plan and the verification as JSON");
    cmd->callback([args, &exit_code] { exit_code = run_export(*args); });
}

}  // namespace mlens::cli
