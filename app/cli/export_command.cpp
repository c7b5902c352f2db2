// mlens export-upstream PATH OUT.gguf [--mmproj OUT]: writes what llama.cpp would load after
// Ollama's compatibility shim — the upstream-shaped text GGUF and, when asked, the mmproj — with
// every edit applied and every data operation executed; each file is re-read and checked.
// --json prints what was written as one object (assets/schemas/mlens-export-upstream.schema.json).
#include <iostream>

#include "cli_common.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

nlohmann::json export_json(const std::string& path, const compat::RewritePlan& plan, const compat::ExportReport& report) {
    auto side = [](const compat::SidePlan& p) {
        return nlohmann::json{{"arch_before", p.arch_before},
                              {"arch_after", p.arch_after},
                              {"handlers", p.handlers},
                              {"summary", p.summary()},
                              {"empty", p.empty()}};
    };
    nlohmann::json files = nlohmann::json::array();
    for (const compat::ExportedFile& f : report.files)
        files.push_back({{"side", compat::plan_side_name(f.side)},
                         {"path", f.path},
                         {"bytes", f.bytes},
                         {"metadata", f.metadata},
                         {"tensors", f.tensors},
                         {"data_ops", f.data_ops}});
    return {{"path", shown_path(path)}, {"text", side(plan.text)}, {"clip", side(plan.clip)}, {"files", files}, {"notes", report.notes}};
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("export-upstream", "Write the upstream llama.cpp GGUF (and mmproj) of an Ollama-made GGUF");
    auto path = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto mmproj = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Ollama-made GGUF (a file or an Ollama blob)")->required();
    cmd->add_option("OUT", *out, "Write the upstream text GGUF to this file")->required();
    cmd->add_option("--mmproj", *mmproj, "Write the vision projector (mmproj) GGUF to this file too");
    cmd->add_flag("--json", *json, "Print what was written as JSON");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(*path, exit_code);
        if (!model) return;
        if (model->partial || model->error_count() > 0) {
            exit_code = fail(*path, ErrorCode::E_INVALID, escape_for_display(shown_path(*path)) + " has errors; run `mlens check` for details");
            return;
        }
        compat::RewritePlan plan = compat::plan_compat(*model);
        compat::ExportOptions options{*out, *mmproj, {}};
        auto report = compat::export_upstream(*model, plan, options);
        if (!report) {
            // A failure of an output is about that file: OUT, or with --mmproj the file its
            // message names (both could be), not the input.
            const bool about_output = report.error().field == "output";
            exit_code = fail(about_output ? (mmproj->empty() ? *out : std::string()) : *path, report.error());
            return;
        }
        exit_code = kExitOk;
        if (*json) {
            print_json_result(export_json(*path, plan, *report));
            return;
        }
        std::cout << "text: " << escape_for_display(plan.text.summary(), 2000) << "\n";
        std::cout << "clip: " << escape_for_display(plan.clip.summary(), 2000) << "\n";
        for (const compat::ExportedFile& f : report->files)
            std::cout << "wrote " << (f.side == compat::PlanSide::text ? "text GGUF " : "mmproj ") << escape_for_display(f.path) << ": "
                      << plural(f.metadata, "key") << ", " << plural(f.tensors, "tensor") << " (" << f.data_ops << " from data ops), " << f.bytes
                      << " bytes; re-read and checked\n";
        for (const std::string& note : report->notes) std::cout << "note: " << note << "\n";
    });
}

}  // namespace mlens::cli
