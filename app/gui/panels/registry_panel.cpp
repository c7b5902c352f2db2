#include "panels/registry_panel.h"

#include <imgui.h>

#include "mlens/ollama/registry_view.h"
#include "mlens/ollama/store_summary.h"
#include "mlens/text/escape.h"
#include "panels/registry_blobs_view.h"
#include "panels/store_summary_view.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

void RegistryPanel::start(PanelContext& ctx) {
    m_started = true;
    m_status.clear();
    const std::string reference = ctx.doc.path.substr(std::string_view("ollama://").size());
    m_job = ctx.jobs.start("Registry manifest", [reference](JobContext& job) -> Result<ManifestView> {
        auto parsed = parse_registry_reference(reference);
        if (!parsed) return parsed.error();
        auto registry = fetch_registry_manifest(*parsed, &job);
        if (!registry) return registry.error();
        return view_registry_model(*parsed, *registry, &job);
    });
}

void RegistryPanel::draw(PanelContext& ctx) {
    if (!m_started) start(ctx);
    if (std::optional<Result<ManifestView>> taken = m_job.try_take()) {
        if (*taken)
            m_view = std::make_shared<const ManifestView>(std::move(**taken));
        else
            m_status = escape_for_display(taken->error().to_string(), 1000);
    }
    if (m_job) {
        if (ImGui::Button("Cancel")) m_job.cancel();
        ImGui::SameLine();
        ui::text_dim("fetching the manifest, the config and the text layers\xE2\x80\xA6");
        return;
    }
    if (!m_view) {
        ui::text_colored(palette().error, "The registry's manifest could not be read: " + m_status);
        if (ImGui::Button("Try again")) start(ctx);
        return;
    }
    const ManifestView& v = *m_view;
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
    if (ImGui::CollapsingHeader(layers.c_str())) layers_table(ctx);
    ImGui::EndChild();
}

void RegistryPanel::layers_table(PanelContext& ctx) const {
    const ManifestView& v = *m_view;
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
