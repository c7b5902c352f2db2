#include "panels/compat_export.h"

#include <optional>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "state/compat_rows.h"
#include "state/output_folder.h"
#include "state/output_inputs.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"
#include "widgets/write_job_row.h"

namespace mlens {

namespace fs = std::filesystem;

void CompatExport::open(const Document& doc, const CompatView& view) {
    fs::path input(doc.path);
    fs::path dir = output_folder_for(doc.path);
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
            ui::text(ui::with_separators(f.metadata));
            ImGui::TableNextColumn();
            ui::text(ui::with_separators(f.tensors));
            ImGui::TableNextColumn();
            ui::text(ui::with_separators(f.data_ops));
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

void CompatExport::paths_view() {
    ImGui::BeginDisabled(static_cast<bool>(m_job));
    const float label_width = ImGui::CalcTextSize("text GGUF").x + ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(-label_width);
    ImGui::InputText("text GGUF", &m_text_path);
    if (m_vision) {
        ImGui::Checkbox("##write_mmproj", &m_write_mmproj);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Also write the mmproj");
        ImGui::SameLine();
        ImGui::BeginDisabled(!m_write_mmproj);
        ImGui::SetNextItemWidth(-label_width);
        ImGui::InputText("mmproj", &m_mmproj_path);
        ImGui::EndDisabled();
    }
    if (ImGui::Button("Browse\xE2\x80\xA6")) m_chooser.open_folder(fs::path(m_text_path).parent_path().string());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pick the folder to write into; the file names stay");
    ImGui::EndDisabled();
    if (std::optional<std::string> folder = m_chooser.draw()) {
        m_text_path = with_folder(m_text_path, *folder);
        if (!m_mmproj_path.empty()) m_mmproj_path = with_folder(m_mmproj_path, *folder);
    }
}

void CompatExport::draw(PanelContext& ctx, const std::shared_ptr<const CompatView>& view) {
    poll();
    if (!m_open) return;
    ui::fit_next_window(820, 380);
    std::string title = "Export upstream GGUF \xE2\x80\x94 " + ctx.doc.title + "###compat_export_" + std::to_string(ctx.doc.id);
    if (!ImGui::Begin(title.c_str(), &m_open, ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    ui::begin_write_body();
    ImGui::PushTextWrapPos(0);
    ui::text_dim(
        "Writes what llama.cpp loads after Ollama's compatibility shim: the text model with the text "
        "loader's keys and tensors (hidden ones left out)" +
        std::string(m_vision ? ", and the vision part as an mmproj (the clip loader's view)." : "."));
    ImGui::PopTextWrapPos();
    paths_view();
    if (m_outcome) {
        ImGui::Separator();
        report_view(ctx);
    }
    ui::end_write_body();
    bool paths_ok = !m_text_path.empty() && (!m_vision || !m_write_mmproj || !m_mmproj_path.empty());
    if (ui::write_job_row(paths_ok && !m_job, m_job, m_open)) start(ctx, view);
    ImGui::End();
}

}  // namespace mlens
