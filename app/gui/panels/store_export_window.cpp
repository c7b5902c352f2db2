#include "panels/store_export_window.h"

#include <optional>
#include <algorithm>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/text/readable_text.h"
#include "panels/weights_tables.h"
#include "state/output_folder.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/ui.h"
#include "widgets/write_job_row.h"

namespace mlens {

namespace fs = std::filesystem;

namespace {

std::string out_dir_name(const ModelName& name, ExportFormat format) {
    return name.model + "-" + name.tag + "-" + export_format_name(format);
}

}  // namespace

void StoreExportWindow::open(PanelContext& ctx, const Store& store, const ModelName& name, std::vector<ExportFormat> formats) {
    if (busy()) return;
    m_store = store;
    m_name = name;
    m_formats = std::move(formats);
    m_parent = default_output_folder();
    m_open = true;
    m_outcome.reset();
    if (!m_formats.empty()) choose(ctx, m_formats.front());
}

void StoreExportWindow::choose(PanelContext& ctx, ExportFormat format, std::optional<HfDtype> dtype) {
    if (busy() || !m_store) return;
    m_format = format;
    m_dtype = format == ExportFormat::hf ? dtype : std::nullopt;
    m_out_dir = (fs::path(m_parent) / out_dir_name(m_name, format)).string();
    m_planning.reset();
    m_outcome.reset();
    m_readme.clear();
    StoreExportOptions options;
    options.format = format;
    options.dtype = m_dtype;
    Store store = *m_store;
    ModelName name = m_name;
    m_plan_job = ctx.jobs.start("plan export " + escape_for_display(name.display(), 60),
                                [store, name, options](JobContext& job) { return prepare_store_export(store, name, options, &job); });
}

void StoreExportWindow::start_export(PanelContext& ctx) {
    if (busy() || !prepared() || m_out_dir.empty()) return;
    std::shared_ptr<PreparedExport> prepared = m_planning->value();
    const std::string out_dir = m_out_dir;
    m_outcome.reset();
    m_export_job = ctx.jobs.start("export " + escape_for_display(m_name.display(), 60),
                                  [prepared, out_dir](JobContext& job) { return write_store_export(*prepared, out_dir, &job); });
}

void StoreExportWindow::poll() {
    if (std::optional<Result<PreparedExport>> planned = m_plan_job.try_take()) {
        if (*planned)
            m_planning.emplace(std::make_shared<PreparedExport>(std::move(*planned).value()));
        else
            m_planning.emplace(planned->error());
        if (prepared())
            for (const ExportFile& f : prepared()->plan.files)
                if (f.name == "README.md") m_readme = readable_text(f.text, 1u << 20);
    }
    if (std::optional<Result<StoreExportReport>> written = m_export_job.try_take())
        m_outcome = std::make_shared<StoreExportOutcome>(std::move(*written));
}

void StoreExportWindow::plan_view() {
    const StoreExportPlan& plan = prepared()->plan;
    ui::text_dim("Will write " + plural(plan.files.size(), "file") + ", " + human_bytes(plan.total_bytes()) + ":");
    ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;
    const float height = std::min(12.0f, static_cast<float>(plan.files.size()) + 1.5f) * ImGui::GetTextLineHeightWithSpacing();
    if (ImGui::BeginTable("export_plan", 3, flags, ImVec2(0, height))) {
        ImGui::TableSetupColumn("file");
        ImGui::TableSetupColumn("bytes");
        ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableHeadersRow();
        for (const ExportFile& f : plan.files) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::text(escape_for_display(f.name, 120));
            ImGui::TableNextColumn();
            ui::text(ui::with_separators(f.bytes));
            ImGui::TableNextColumn();
            ui::text_dim(escape_for_display(f.description, 200));
        }
        ImGui::EndTable();
    }
    ImGui::PushTextWrapPos(0);
    for (const std::string& note : plan.notes) ui::text_dim("note: " + escape_for_display(note, 300));
    ImGui::PopTextWrapPos();
}

void StoreExportWindow::readme_view() {
    if (m_readme.empty() || !ImGui::CollapsingHeader("README.md", ImGuiTreeNodeFlags_DefaultOpen)) return;
    // The rest of the body, at least eight lines: the body scrolls when less is left.
    const float height = std::max(ImGui::GetContentRegionAvail().y, 8 * ImGui::GetTextLineHeightWithSpacing());
    ImGui::BeginChild("export_readme", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextUnformatted(m_readme.c_str(), m_readme.c_str() + m_readme.size());
    ImGui::EndChild();
}

void StoreExportWindow::result_view(PanelContext& ctx) {
    const StoreExportOutcome& o = *m_outcome;
    if (ui::write_failure_text(o)) return;
    const StoreExportReport& r = *o;
    std::string verified = "\xE2\x9C\x93 Written and verified: " + plural(r.files_verified, "file");
    if (m_format != ExportFormat::gguf)
        verified += ", " + plural(r.verification.tensors_checked, "tensor") + ", " + plural(r.verification.failures, "failure");
    ui::text_colored(palette().ok, verified);
    for (const QuantExactness& m : r.verification.modes)
        ui::text_dim("  " + escape_for_display(m.mode, 80) + ": " + plural(m.tensors, "tensor") + ", " +
                     (m.exact() ? std::string("exact")
                                : std::to_string(m.rounded) + " of " + plural(m.values, "value") + " rounded, worst error " +
                              number_text(m.worst_error)));
    ImGui::BeginDisabled(!ctx.workspace);
    if (ImGui::Button("Open result") && ctx.workspace)
        ctx.workspace->open(m_format == ExportFormat::gguf ? r.out_dir + "/model.gguf" : r.out_dir);
    ImGui::EndDisabled();
}

void StoreExportWindow::options_row(PanelContext& ctx) {
    ImGui::BeginDisabled(busy());
    for (ExportFormat f : m_formats) {
        if (ImGui::RadioButton(export_format_name(f), m_format == f) && m_format != f) choose(ctx, f);
        ImGui::SameLine();
    }
    if (m_format == ExportFormat::hf) {
        static const char* kDtypes[] = {"model's own", "bf16", "f16", "f32"};
        int current = m_dtype ? static_cast<int>(*m_dtype) + 1 : 0;
        ImGui::SetNextItemWidth(140);
        if (ImGui::Combo("dtype", &current, kDtypes, 4))
            choose(ctx, m_format, current == 0 ? std::nullopt : std::optional<HfDtype>(static_cast<HfDtype>(current - 1)));
    } else {
        ImGui::NewLine();
    }
    ImGui::AlignTextToFramePadding();
    ui::text("folder");
    ImGui::SameLine();
    const float browse_width = ImGui::CalcTextSize("Browse\xE2\x80\xA6").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(-(browse_width + ImGui::GetStyle().ItemSpacing.x));
    ImGui::InputText("##folder", &m_out_dir);
    ImGui::SameLine();
    if (ImGui::Button("Browse\xE2\x80\xA6")) m_chooser.open_folder(fs::path(m_out_dir).parent_path().string());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pick the folder to write the export folder into");
    ImGui::EndDisabled();
    if (std::optional<std::string> folder = m_chooser.draw()) {
        m_parent = *folder;
        m_out_dir = with_folder(m_out_dir, m_parent);
    }
}

void StoreExportWindow::draw(PanelContext& ctx) {
    poll();
    if (!m_open) return;
    ui::fit_next_window(900, 720);
    std::string title = "Export \xE2\x80\x94 " + escape_for_display(m_name.display(), 80) + "###store_export_" + std::to_string(ctx.doc.id);
    if (!ImGui::Begin(title.c_str(), &m_open, ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    ui::begin_write_body();
    options_row(ctx);
    if (m_plan_job) {
        ImGui::ProgressBar(static_cast<float>(m_plan_job.progress()), ImVec2(260, 0), "planning\xE2\x80\xA6");
    } else if (m_planning && !*m_planning) {
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().error, escape_for_display(m_planning->error().to_string(), 600));
        ImGui::PopTextWrapPos();
    } else if (prepared()) {
        plan_view();
    }
    if (m_outcome) {
        ImGui::Separator();
        result_view(ctx);
    }
    readme_view();
    ui::end_write_body();
    if (ui::write_job_row(!busy() && prepared() && !m_out_dir.empty(), m_export_job, m_open)) start_export(ctx);
    ImGui::End();
}

}  // namespace mlens
