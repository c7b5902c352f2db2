// mlens check PATH [--json]: diagnostics, one per line on stderr (malformed-inputs.md A4).
// PATH is resolved as every command resolves it (open/target.h): an Ollama store root has every
// manifest validated (check_store) and each model's verdict printed; anything else is opened as
// one model (a file, a safetensors folder, a store model by reference or manifest).
// A model also gets the one-line verdict of `mlens loads` (loadability.h); it does not change the
// exit status, which is about the file's own validity. check reads the structure (header, keys,
// tensor regions), not the tensor values: a file without errors is "structure ok", and a last line
// says that values were not scanned and that `mlens fsck PATH` scans them (for an Ollama model,
// of a store or a registry, another that blob digests were not verified and that `mlens verify
// PATH` hashes them). A file cut short shows
// its truncation summary with the cut tensors listed under it by name (truncation.h), not one
// out-of-bounds row per tensor; --json keeps every diagnostic.
// Exit status: 0 accepted (warnings allowed), 1 errors, 2 usage.
#include <iostream>

#include "cli_common.h"
#include "command_cache.h"
#include "mlens/analysis/loadability.h"
#include "mlens/model/model_json.h"
#include "mlens/model/truncation.h"
#include "mlens/ollama/store_check.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

int check_store_root(const std::string& path, const Store& store, bool json, bool no_cache) {
    std::shared_ptr<CacheDatabase> cache = command_cache(no_cache);
    StoreCheckReport report = check_store(store, full_check(cache.get())).value;
    const size_t errors = report.error_count();
    if (json) {
        nlohmann::json models = nlohmann::json::array();
        for (const ModelCheck& m : report.models)
            models.push_back({{"name", m.name.display()},
                              {"manifest", m.manifest_path},
                              {"accepted", m.errors == 0},
                              {"verdict", verdict_name(m.verdict())},
                              {"reason", m.reason_text()},
                              {"errors", m.errors},
                              {"warnings", m.warnings}});
        nlohmann::json out = {{"path", path},
                              {"store", report.root},
                              {"accepted", errors == 0},
                              {"errors", errors},
                              {"warnings", report.warning_count()},
                              {"blobs_checked", report.blobs_checked},
                              {"bytes_hashed", report.bytes_hashed},
                              {"models", models},
                              {"diagnostics", nlohmann::json::array()}};
        for (const Diagnostic& d : report.diagnostics) out["diagnostics"].push_back(diagnostic_to_json(d));
        print_json_result(out);
        return errors ? kExitBroken : kExitOk;
    }
    for (const Diagnostic& d : report.diagnostics) std::cerr << d.to_line() << "\n";
    for (const ModelCheck& m : report.models)
        std::cout << m.name.display() << ": " << (m.errors ? "rejected" : "ok") << " (" << plural(m.errors, "error") << ", "
                  << plural(m.warnings, "warning") << ")" << (m.errors ? ": " + m.reason_text() : std::string()) << "\n";
    std::cout << escape_for_display(path) << ": " << (errors ? "rejected" : "ok") << " (store, " << plural(report.models.size(), "model")
              << ", " << plural(errors, "error") << ", " << plural(report.warning_count(), "warning") << ")\n";
    return errors ? kExitBroken : kExitOk;
}

// The diagnostics on stderr, one per line (malformed-inputs.md A4), in listed_diagnostics order: a
// truncation summary stands for the out-of-bounds rows of the tensors it cut, which stdout lists
// under it by name.
void print_diagnostics(const Model& model) {
    for (const ListedDiagnostic& listed : listed_diagnostics(model)) {
        std::cerr << model.diagnostics[listed.diagnostic].to_line() << "\n";
        for (size_t t : listed.cut)
            std::cout << "  cut " << escape_for_display(model.tensors[t].name, 200) << ": " << cut_tensor_text(model, t) << std::endl;
    }
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "Validate a file or an Ollama store; exit status 1 on errors");
    auto args = add_path_arguments(cmd, "Model file, safetensors folder, or Ollama store root", "Print diagnostics as JSON on stdout");
    auto no_cache = std::make_shared<bool>(false);
    add_no_cache_flag(cmd, *no_cache);
    cmd->callback([=, &exit_code] {
        const Target target = resolve(args->path);
        if (target.kind == TargetKind::store_root) {
            exit_code = check_store_root(args->path, *target.store, args->json, *no_cache);
            return;
        }
        auto model = open_or_fail(target, false, exit_code);
        if (!model) return;
        // As listed: a truncation summary stands for the out-of-bounds rows it leaves out (the
        // JSON array keeps them).
        const size_t errors = listed_error_count(*model);
        exit_code = errors ? kExitBroken : kExitOk;
        if (args->json) {
            nlohmann::json out = {{"path", shown_path(args->path)},
                                  {"accepted", errors == 0},
                                  {"errors", errors},
                                  {"warnings", model->warning_count()},
                                  {"diagnostics", nlohmann::json::array()}};
            for (const Diagnostic& d : model->diagnostics) out["diagnostics"].push_back(diagnostic_to_json(d));
            out["loads"] = loadability_json(assess_loadability(*model));
            print_json_result(out);
            return;
        }
        print_diagnostics(*model);
        const std::string shown = escape_for_display(shown_path(args->path));
        std::cout << shown << ": " << (errors ? "rejected" : "structure ok") << " (" << plural(errors, "error") << ", "
                  << plural(model->warning_count(), "warning") << ")\n";
        std::cout << escape_for_display(assess_loadability(*model).summary()) << "\n";
        if (errors) return;
        std::cout << "tensor values not scanned (NaN, Inf, broken scales): mlens fsck " << shown << " scans them\n";
        if (target.kind == TargetKind::store_model || target.kind == TargetKind::registry_model)
            std::cout << "blob digests not verified: mlens verify " << shown << " hashes them\n";
    });
}

}  // namespace mlens::cli
