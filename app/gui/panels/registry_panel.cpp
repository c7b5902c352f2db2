#include "panels/registry_panel.h"

#include <imgui.h>

#include "mlens/ollama/store_summary.h"
#include "mlens/text/escape.h"
#include "panels/registry_blobs_view.h"
#include "panels/store_summary_view.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

void RegistryPanel::draw(PanelContext& ctx) {
    if (!ctx.doc.registry()) {
        ui::text_dim("Not a model opened from an Ollama registry.");
        return;
    }
    const ManifestView& v = *ctx.doc.registry();
    ui::label_value("manifest", v.stored.ref.path);
    ui::label_value("digest", v.stored.digest + "  (" + std::to_string(v.stored.ref.file_size) + " bytes)");
    ui::text_dim("Blob digests are not verified at open: Health \xE2\x86\x92 Verify blobs fetches and hashes every blob.");
    ImGui::BeginChild("registry_sections", ImVec2(0, 0), false);
    const ImGuiTreeNodeFlags open = ImGuiTreeNodeFlags_DefaultOpen;
    if (ImGui::CollapsingHeader("Summary", open))
        store_summary_view(summarize_store_model(v, ctx.doc.model().get()), v.stored.manifest.total_size(), ctx.fonts);
    if (ImGui::CollapsingHeader("Config", open)) store_config_view(v);
    if (ImGui::CollapsingHeader("Text layers", open)) store_text_layers_view(v, ctx.fonts);
    const std::string layers = "Layers (" + std::to_string(v.layers.size()) + " + config)###layers";
    if (ImGui::CollapsingHeader(layers.c_str())) layers_table(v, ctx);
    ImGui::EndChild();
}

void RegistryPanel::layers_table(const ManifestView& v, PanelContext& ctx) const {
    if (!ImGui::BeginTable("registry_layers", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
        return;
    ImGui::TableSetupColumn("Kind");
    ImGui::TableSetupColumn("Digest");
    ImGui::TableSetupColumn("Size");
    ImGui::TableSetupColumn("Media type", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    auto row = [&](const LayerView& lv) {
        const ManifestLayer& l = lv.layer;
        ImGui::TableNextRow();
        blob_cells(l.kind, l.digest, l.size, ctx.fonts);
        ImGui::TableNextColumn();
        ui::text_dim(escape_for_display(l.media_type, 200));
        if (lv.text_error) {
            ImGui::SameLine();
            ui::text_colored(palette().error, escape_for_display(lv.text_error->to_string(), 300));
        }
    };
    if (v.stored.manifest.has_config) row(v.config_layer);
    for (const LayerView& lv : v.layers) row(lv);
    ImGui::EndTable();
}

}  // namespace mlens
