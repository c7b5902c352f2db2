#include "panels/model_error_panel.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "panels/weights_tables.h"
#include "state/job_outcome.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/document_picker.h"
#include "widgets/ui.h"

namespace mlens {

void ModelErrorPanel::poll() {
    std::optional<ModelErrorRun> run;
    if (!take_finished(m_job, run, m_status)) return;
    m_running.reset();
    if (!run) return;
    m_result = std::make_shared<ModelErrorRun>(std::move(*run));
    m_table.reset();
}

void ModelErrorPanel::forget_closed(PanelContext& ctx) {
    if (m_running && !still_open(ctx.workspace, m_running->reference_id, m_running->reference)) m_job.cancel();
    if (m_result && !still_open(ctx.workspace, m_result->reference_id, m_result->reference)) {
        m_result.reset();
        m_status = "The reference was closed; its results were cleared.";
    }
    m_reference.refresh(ctx.workspace, ctx.doc);
}

bool ModelErrorPanel::accept_link(std::string_view link, Document&) {
    if (!link.starts_with("error:")) return false;
    m_reference.link(std::string(link.substr(6)));
    return true;
}

void ModelErrorPanel::follow_linked_reference(PanelContext& ctx) {
    if (m_reference.follow_link(ctx.workspace, ctx.doc)) start(ctx);
}

void ModelErrorPanel::start(PanelContext& ctx) {
    Document* ref = m_reference.get(ctx.workspace);
    if (!ref || !can_pair(*ref, ctx.doc)) return;
    m_job.cancel();
    ModelErrorRun run;
    run.reference_id = ref->id;
    run.reference_title = ref->title;
    run.reference = ref->model();
    run.model = ctx.doc.model();
    m_running = run;
    m_job = ctx.jobs.start("model error vs " + ref->title, [run = std::move(run)](JobContext& job) { return run_model_error(run, &job); });
    m_status.clear();
}

void ModelErrorPanel::show_row(Document& doc, size_t row) const {
    if (!m_result || row >= m_result->error.tensors.size()) return;
    size_t tensor = m_result->error.tensors[row].pair.b.tensor;
    if (tensor < doc.model()->tensors.size()) doc.select({SelectionKind::tensor, tensor}, "weights");
}

void ModelErrorPanel::reference_picker(PanelContext& ctx) {
    ImGui::AlignTextToFramePadding();
    ui::text_dim("Reference (A):");
    ImGui::SameLine();
    ui::document_picker("##reference", ctx, m_reference, 260);
    ImGui::SameLine();
    ui::text_dim("\xE2\x86\x92 candidate (B): this file, " + ctx.doc.title);
}

void ModelErrorPanel::toolbar(PanelContext& ctx) {
    reference_picker(ctx);
    ImGui::BeginDisabled(m_reference.id() == 0);
    if (ImGui::Button("Compare all tensors")) start(ctx);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Decodes every tensor of both files, paired by name, and measures B against A");
    if (m_job) {
        ImGui::SameLine();
        ImGui::ProgressBar(static_cast<float>(std::clamp(m_job.progress(), 0.0, 1.0)), ImVec2(240, 0), "comparing\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel")) m_job.cancel();
    }
    if (!m_status.empty()) {
        ImGui::SameLine();
        ui::text_dim(m_status);
    }
}

void ModelErrorPanel::summary(Document& doc) {
    const ModelErrorRun& r = *m_result;
    if (stale())
        ui::text_colored(palette().warning,
                         "These results compare with " + r.reference_title + ", not the reference picked now: compare again to update.");
    ui::text(counted_as(ui::with_separators(r.compared), r.compared, "tensor") + " compared \xC2\xB7 " + ui::with_separators(r.failed) + " failed \xC2\xB7 " +
             ui::with_separators(r.only_reference) + " only in the reference \xC2\xB7 " + ui::with_separators(r.only_model) +
             " only in this file \xC2\xB7 overall pooled RMSE " + number_text(r.pooled_rmse));
    if (!r.name_alignment.empty())
        ui::text_dim("tensor names aligned by " + r.name_alignment + " (values transformed as its converter does)");
    std::optional<size_t> worst;
    for (size_t i = 0; i < r.error.tensors.size(); ++i) {
        const TensorError& t = r.error.tensors[i];
        if (t.error && (!worst || t.error->nmse > r.error.tensors[*worst].error->nmse)) worst = i;
    }
    if (!worst) return;
    const TensorError& w = r.error.tensors[*worst];
    ImGui::AlignTextToFramePadding();
    ui::text_dim("Worst tensor by NMSE:");
    ImGui::SameLine();
    std::string label = escape_for_display(w.name_b, 80) + " (NMSE " + number_text(w.error->nmse) + ")";
    if (ImGui::Button(label.c_str())) show_row(doc, *worst);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show it in the Weights panel");
}

void ModelErrorPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    poll();
    forget_closed(ctx);
    follow_linked_reference(ctx);
    toolbar(ctx);
    if (!m_result) {
        if (m_reference.id() == 0)
            ui::text_dim("Open another model (e.g. the unquantized original) to compare this one with it.");
        else if (!m_job)
            ui::text_dim("Press Compare all tensors to measure every tensor of this file against the reference.");
        return;
    }
    summary(doc);
    const ModelErrorRun& r = *m_result;
    if (!r.error.layers.empty()) {
        ImGui::AlignTextToFramePadding();
        ui::text_dim("Per layer:");
        ImGui::SameLine();
        if (ImGui::RadioButton("pooled RMSE", m_metric == LayerMetric::rmse)) m_metric = LayerMetric::rmse;
        ImGui::SameLine();
        if (ImGui::RadioButton("worst NMSE", m_metric == LayerMetric::worst_nmse)) m_metric = LayerMetric::worst_nmse;
        float height = std::clamp(ImGui::GetContentRegionAvail().y * 0.35f, 120.0f, 260.0f);
        if (std::optional<size_t> layer = layer_error_plot(r.error.layers, m_metric, ImVec2(0, height)))
            if (std::optional<size_t> row = find_tensor_row(r.error, r.error.layers[*layer].worst_tensor)) show_row(doc, *row);
    }
    std::optional<size_t> selected;
    if (doc.selection.kind == SelectionKind::tensor) selected = doc.selection.index;
    if (std::optional<size_t> row = m_table.draw(r.error, ctx.fonts, selected)) show_row(doc, *row);
}

}  // namespace mlens
