#include "panels/compat_export.h"

#include <cfloat>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "state/compat_rows.h"
#include "state/output_inputs.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"
#include "widgets/write_job_row.h"

namespace mlens {

namespace fs = std::filesystem;

void CompatExport::open(const Document& doc, const CompatView& view) {
    fs::path input(doc.path);
    std::error_code ec;
    fs::path dir = input.extension() == ".gguf" ? input.parent_path() : fs::current_path(ec);
    std::string stem = input.extension() == ".gguf" ? input.stem().string() : input.filename().string();
    if (stem.empty()) stem = "model";
    m_vision = view.vision_export;
    m_text_path = (dir / (stem + ".upstream.gguf")).string();
    m_mmproj_path = m_vision ? (dir / (stem + ".mmproj.gguf")).string() : std::string();
    m_write_mmproj = m_vision;
    m_outcome.reset();
    m_open = true;
}

void CompatExport::start(PanelContext& ctx, std::shared_ptr<const CompatView> view) {
    if (m_job || !view) return;
    compat::ExportOptions options{m_text_path, m_vision && m_write_mmproj ? m_mmproj_path : std::string(),
                                  gui_output_guard(&ctx.doc, ctx.workspace)};
    std::shared_ptr<const Model> model = ctx.doc.model();
    m_outcome.reset();
    m_job = ctx.jobs.start("export upstream " + escape_for_display(fs::path(m_text_path).filename().string(), 60),
                           [model, view, options](JobContext& job) { return compat::export_upstream(*model, view->plan, options, &job); });
}

void CompatExport::poll() {
    std::optional<Result<compat::ExportReport>> taken = m_job.try_take();
    if (!taken) return;
    m_outcome = std::make_shared<ExportOutcome>(std::move(*taken));
}

void CompatExport::report_view(PanelContext& ctx) {
    const ExportOutcome& o = *m_outcome;
    if (ui::write_failure_text(o)) return;
    ui::text_colored(palette().ok, "\xE2\x9C\x93 Exported and re-read without errors");
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("export_report", 6, flags)) {
        ImGui::TableSetupColumn("file", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("size");
        ImGui::TableSetupColumn("keys");
        ImGui::TableSetupColumn("tensors");
        ImGui::TableSetupColumn("data ops");
        ImGui::TableSetupColumn("");
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < o->files.size(); ++i) {
            const compat::ExportedFile& f = o->files[i];
            ImGui::PushID(static_cast<int>(i));
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::text_dim(f.side == compat::PlanSide::text ? "text " : "mmproj ");
            ImGui::SameLine(0, 0);
            ui::text(escape_for_display(f.path, 200));
            ImGui::TableNextColumn();
            ui::text(human_bytes(f.bytes));
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s bytes", ui::with_separators(f.bytes).c_str());
            ImGui::TableNextColumn();
            ui::text(std::to_string(f.metadata));
            ImGui::TableNextColumn();
            ui::text(std::to_string(f.tensors));
            ImGui::TableNextColumn();
            ui::text(std::to_string(f.data_ops));
            ImGui::TableNextColumn();
            ImGui::BeginDisabled(!ctx.workspace);
            if (ImGui::SmallButton("Open exported file") && ctx.workspace) ctx.workspace->open(f.path);
            ImGui::EndDisabled();
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
    for (const std::string& note : o->notes) ui::text_dim("note: " + escape_for_display(note, 300));
}

void CompatExport::draw(PanelContext& ctx, const std::shared_ptr<const CompatView>& view) {
    poll();
    if (!m_open) return;
    // Sized to its content (the report appears below the paths), at least 720 wide.
    const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(720, 0), ImVec2(FLT_MAX, FLT_MAX));
    std::string title = "Export upstream GGUF \xE2\x80\x94 " + ctx.doc.title + "###compat_export_" + std::to_string(ctx.doc.id);
    if (!ImGui::Begin(title.c_str(), &m_open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + 700);
    ui::text_dim(
        "Writes what llama.cpp loads after Ollama's compatibility shim: the text model with the text "
        "loader's keys and tensors (hidden ones left out)" +
        std::string(m_vision ? ", and the vision part as an mmproj (the clip loader's view)." : "."));
    ImGui::PopTextWrapPos();
    ImGui::BeginDisabled(static_cast<bool>(m_job));
    ImGui::SetNextItemWidth(-90);
    ImGui::InputText("text GGUF", &m_text_path);
    if (m_vision) {
        ImGui::Checkbox("##write_mmproj", &m_write_mmproj);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Also write the mmproj");
        ImGui::SameLine();
        ImGui::BeginDisabled(!m_write_mmproj);
        ImGui::SetNextItemWidth(-90);
        ImGui::InputText("mmproj", &m_mmproj_path);
        ImGui::EndDisabled();
    }
    ImGui::EndDisabled();
    bool paths_ok = !m_text_path.empty() && (!m_vision || !m_write_mmproj || !m_mmproj_path.empty());
    if (ui::write_job_row(paths_ok && !m_job, m_job, m_open)) start(ctx, view);
    if (m_outcome) {
        ImGui::Separator();
        report_view(ctx);
    }
    ImGui::End();
}

}  // namespace mlens
