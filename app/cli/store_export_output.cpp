#include "store_export_output.h"

#include <iostream>

#include "cli_common.h"
#include "mlens/ollama/store_export.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

struct FormatPlan {
    ExportFormat format;
    Result<StoreExportPlan> plan;  // or why the model cannot be written in this format
};

std::vector<FormatPlan> export_plans(const Store& store, const ModelName& name) {
    std::vector<FormatPlan> out;
    StoredManifest manifest = store.read_manifest(name);
    for (ExportFormat format : store_export_formats(manifest.manifest)) {
        StoreExportOptions options;
        options.format = format;
        auto prepared = prepare_store_export(store, name, options);
        out.push_back({format, prepared ? Result<StoreExportPlan>(std::move(prepared->plan)) : Result<StoreExportPlan>(prepared.error())});
    }
    return out;
}

}  // namespace

nlohmann::json export_plans_json(const Store& store, const ModelName& name) {
    nlohmann::json out = nlohmann::json::array();
    for (const FormatPlan& p : export_plans(store, name)) {
        nlohmann::json files = nlohmann::json::array();
        if (p.plan)
            for (const ExportFile& f : p.plan->files) files.push_back({{"name", escape_for_display(f.name, 300)}, {"bytes", f.bytes}});
        out.push_back({{"format", export_format_name(p.format)},
                       {"files", files},
                       {"total_bytes", p.plan ? nlohmann::json(p.plan->total_bytes()) : nlohmann::json(nullptr)},
                       {"error", p.plan ? nlohmann::json(nullptr) : nlohmann::json(escape_for_display(p.plan.error().to_string(), 2000))}});
    }
    return out;
}

void print_export_plans(const Store& store, const ModelName& name) {
    std::vector<FormatPlan> plans = export_plans(store, name);
    if (plans.empty()) return;
    std::cout << "\nexport (what `mlens export " << escape_for_display(name.display()) << " OUT_DIR --format F` writes)\n";
    std::vector<std::vector<std::string>> rows = {{"FORMAT", "FILE", "BYTES"}};
    for (const FormatPlan& p : plans) {
        if (!p.plan) {
            rows.push_back({export_format_name(p.format), "cannot export: " + escape_for_display(p.plan.error().to_string(), 300), ""});
            continue;
        }
        for (const ExportFile& f : p.plan->files)
            rows.push_back({export_format_name(p.format), escape_for_display(f.name, 200), std::to_string(f.bytes)});
        rows.push_back({export_format_name(p.format), "total", std::to_string(p.plan->total_bytes())});
    }
    print_table(rows);
}

}  // namespace mlens::cli
