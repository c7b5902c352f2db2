#include "panels/registry_blobs_view.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr std::string_view kScheme = "ollama://";

}  // namespace

bool RegistryBlobsView::shows(const Document& doc) { return doc.registry() != nullptr; }

void blob_cells(LayerKind kind, const std::string& digest, uint64_t size, const FontSet& fonts) {
    ImGui::TableNextColumn();
    ui::text(layer_kind_name(kind));
    ImGui::TableNextColumn();
    ImGui::PushFont(fonts.mono());
    ui::text(escape_for_display(short_digest(digest), 80));
    ImGui::PopFont();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(digest, 200).c_str());
    ImGui::TableNextColumn();
    ui::text(human_bytes(size));
}

size_t RegistryBlobsView::failed() const {
    if (!m_result) return 0;
    return static_cast<size_t>(
        std::count_if(m_result->blobs.begin(), m_result->blobs.end(), [](const RegistryBlobCheck& b) { return !b.result; }));
}

void RegistryBlobsView::start(PanelContext& ctx) {
    if (m_job) m_job.cancel();
    m_status.clear();
    const std::string reference = ctx.doc.path.substr(kScheme.size());
    m_job = ctx.jobs.start("Verify blobs", [reference](JobContext& job) -> Result<RegistryVerification> {
        auto parsed = parse_registry_reference(reference);
        if (!parsed) return parsed.error();
        return verify_registry_model(*parsed, &job);
    });
}

void RegistryBlobsView::collect() {
    std::optional<Result<RegistryVerification>> taken = m_job.try_take();
    if (!taken) return;
    if (*taken)
        m_result = std::make_shared<const RegistryVerification>(std::move(**taken));
    else
        m_status = taken->error().code == ErrorCode::E_CANCELLED ? "Verification cancelled."
                                                                 : "Verification failed: " + escape_for_display(taken->error().to_string());
}

void RegistryBlobsView::draw(PanelContext& ctx) {
    if (!shows(ctx.doc)) return;
    collect();
    ImGui::PushID("registry blobs");
    ui::text("Blob digests");
    ImGui::SameLine();
    if (m_job) {
        if (ImGui::SmallButton("Cancel")) m_job.cancel();
        ImGui::SameLine();
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(200, 0));
        ImGui::SameLine();
        ui::text_dim("fetching every blob whole and hashing it");
    } else {
        if (ImGui::SmallButton(m_result ? "Verify again" : "Verify blobs")) start(ctx);
        ImGui::SameLine();
        if (m_result)
            ui::text_colored(m_result->ok() ? palette().ok : palette().error, m_result->verdict_text());
        else if (!m_status.empty())
            ui::text_colored(palette().error, m_status);
        else
            ui::text_dim("not verified: the registry's blobs are read by ranges, never whole; verifying fetches every blob whole");
    }
    if (m_result && !m_job) draw_table(ctx);
    ImGui::PopID();
    ImGui::Separator();
}

void RegistryBlobsView::draw_table(PanelContext& ctx) const {
    const RegistryVerification& v = *m_result;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("blobs", 4, flags)) return;
    ImGui::TableSetupColumn("Kind");
    ImGui::TableSetupColumn("Digest");
    ImGui::TableSetupColumn("Size");
    ImGui::TableSetupColumn("Verify", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (const RegistryBlobCheck& blob : v.blobs) {
        ImGui::TableNextRow();
        blob_cells(layer_kind(blob.media_type), blob.digest, blob.size, ctx.fonts);
        ImGui::TableNextColumn();
        if (blob.result) {
            ui::text_colored(palette().ok, blob.verdict());
            continue;
        }
        const std::string message = escape_for_display(blob.result.error().message, 1000);
        ui::text_colored(palette().error, blob.verdict());
        ImGui::SameLine();
        // A mismatch names the digest found (whole on hover); any other failure says why.
        if (!blob.actual.empty()) {
            ui::text_dim("actual " + short_digest(blob.actual));
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", message.c_str());
        } else {
            ui::wrapped_text(message);
        }
    }
    ImGui::EndTable();
}

}  // namespace mlens
