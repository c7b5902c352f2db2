#include "panels/diff_panel.h"

#include <algorithm>
#include <utility>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "panels/weights_tables.h"
#include "state/job_outcome.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/document_picker.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr std::string_view kDiffLink = "diff:";
constexpr std::string_view kDiffValuesLink = "diff-values:";

// Column widths are fitted to the first rows shown (a long list is not measured whole each frame).
constexpr size_t kMeasuredRows = 2000;

constexpr ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                        ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;

std::string joined(const std::vector<std::string>& parts) {
    std::string text;
    for (const std::string& p : parts) text += (text.empty() ? "" : ",") + p;
    return text;
}

void command_line(const char* side, const std::string& command, const FontSet& fonts) {
    ImGui::PushID(side);
    ImGui::AlignTextToFramePadding();
    ui::text_dim(std::string(side) + ":");
    ImGui::SameLine();
    if (command.empty()) {
        ui::text_dim("no llama-quantize command (nothing quantized, or a mix llama-quantize does not make)");
    } else {
        if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(command.c_str());
        ImGui::SameLine();
        ImGui::PushFont(fonts.mono());
        ImGui::TextWrapped("%s", command.c_str());
        ImGui::PopFont();
    }
    ImGui::PopID();
}

}  // namespace

bool DiffPanel::accept_link(std::string_view link, Document&) {
    const bool values = link.starts_with(kDiffValuesLink);
    if (!values && !link.starts_with(kDiffLink)) return false;
    m_other.link(std::string(link.substr(values ? kDiffValuesLink.size() : kDiffLink.size())));
    m_linked_values = values;
    return true;
}

void DiffPanel::start(PanelContext& ctx, bool numeric) {
    Document* other = m_other.get(ctx.workspace);
    if (!other || !can_pair(*other, ctx.doc)) return;
    m_job.cancel();
    m_diffed = other->id;
    ModelDiffRun run;
    run.other_id = other->id;
    run.other_title = other->title;
    run.a = other->model();
    run.b = ctx.doc.model();
    run.numeric = numeric;
    m_running = run;
    m_status.clear();
    m_job = ctx.jobs.start(std::string(numeric ? "diff values vs " : "diff vs ") + other->title,
                           [run = std::move(run)](JobContext& job) { return run_model_diff(run, &job); });
}

void DiffPanel::poll() {
    std::optional<ModelDiffRun> run;
    if (!take_finished(m_job, run, m_status)) return;
    m_running.reset();
    if (!run) return;
    m_result = std::make_shared<ModelDiffRun>(std::move(*run));
    m_show_tensors = m_result->numeric;
}

void DiffPanel::follow_pair(PanelContext& ctx) {
    if (m_running && !still_open(ctx.workspace, m_running->other_id, m_running->a)) m_job.cancel();
    if (m_result && !still_open(ctx.workspace, m_result->other_id, m_result->a)) {
        m_result.reset();
        m_status = "The other file was closed; its differences were cleared.";
    }
    m_other.refresh(ctx.workspace, ctx.doc);
    if (m_other.follow_link(ctx.workspace, ctx.doc)) {
        start(ctx, std::exchange(m_linked_values, false));
        return;
    }
    // The structural diff is cheap: it follows the picker without a click, once per document picked.
    if (m_other.id() != 0 && m_other.id() != m_diffed) start(ctx, false);
}

void DiffPanel::toolbar(PanelContext& ctx) {
    ImGui::AlignTextToFramePadding();
    ui::text_dim("A:");
    ImGui::SameLine();
    ui::document_picker("##diff_other", ctx, m_other, 260);
    ImGui::SameLine();
    ui::text_dim("\xE2\x86\x92 B: this file, " + ctx.doc.title);
    ImGui::BeginDisabled(m_other.id() == 0 || static_cast<bool>(m_job));
    if (ImGui::Button("Compare values")) start(ctx, true);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Decodes every paired tensor of both files and measures B against A (mlens diff --numeric)");
    ImGui::SameLine();
    if (m_job) {
        ImGui::ProgressBar(static_cast<float>(std::clamp(m_job.progress(), 0.0, 1.0)), ImVec2(220, 0),
                           m_running && m_running->numeric ? "comparing values\xE2\x80\xA6" : "comparing\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel")) m_job.cancel();
        ImGui::SameLine();
    }
    ui::search_box("##diff_filter", "filter keys and tensor names", m_filter, 240);
    if (!m_status.empty()) ui::text_dim(m_status);
}

void DiffPanel::summary() {
    const ModelDiffRun& r = *m_result;
    if (r.other_id != m_other.id())
        ui::text_colored(palette().warning, "These differences are with " + r.other_title + ", not the file picked now.");
    if (r.diff.empty() && r.recipe_changes.empty()) {
        ui::text("No differences" + std::string(r.numeric ? ", values included." : " in metadata, tensor names, types and shapes."));
        return;
    }
    std::string line = plural(r.diff.metadata.size(), "metadata difference") + " \xC2\xB7 " +
                       plural(r.diff.tensors.size(), "tensor difference") + " \xC2\xB7 " +
                       plural(r.recipe_changes.size(), "tensor") + " typed differently";
    ui::text(line + (r.numeric ? " \xC2\xB7 values compared" : " \xC2\xB7 values not compared"));
    if (!r.diff.name_map.empty()) ui::text_dim("tensor names aligned by " + r.diff.name_map);
}

void DiffPanel::metadata_tab() {
    const ModelDiff& d = m_result->diff;
    const std::vector<size_t> rows = metadata_rows_matching(d, m_filter);
    if (rows.empty()) {
        ui::text_dim(d.metadata.empty() ? "Every key has the same type and value in both files." : "No key matches the filter.");
        return;
    }
    if (!ImGui::BeginTable("diff_metadata", 4, kTableFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    std::vector<std::string> keys;
    for (size_t i : rows) keys.push_back(escape_for_display(d.metadata[i].key, 200));
    ui::table_columns({{"", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize()},
                       {"key", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(keys, "key", 420)},
                       {"A (type value)", ImGuiTableColumnFlags_WidthStretch, 1},
                       {"B (type value)", ImGuiTableColumnFlags_WidthStretch, 1}});
    ui::clipped_rows(rows, [&](size_t i) {
        const MetadataChange& m = d.metadata[i];
        ImGui::TableNextColumn();
        ui::text_colored(palette().accent, metadata_change_mark(m.kind));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", metadata_change_name(m.kind));
        ImGui::TableNextColumn();
        ui::cell_text(escape_for_display(m.key, 200), ui::Elide::start);
        ImGui::TableNextColumn();
        ui::cell_text(escape_for_display(metadata_side_text(m, DiffSide::a), 300));
        ImGui::TableNextColumn();
        ui::cell_text(escape_for_display(metadata_side_text(m, DiffSide::b), 300));
    });
    ImGui::EndTable();
}

void DiffPanel::tensors_tab(PanelContext& ctx) {
    const ModelDiffRun& r = *m_result;
    const ModelDiff& d = r.diff;
    const std::vector<size_t> rows = tensor_rows_matching(d, m_filter);
    if (rows.empty()) {
        ui::text_dim(d.tensors.empty() ? "Every tensor pairs by name with the same type and shape." : "No tensor matches the filter.");
        return;
    }
    // One name column unless a pair has two names; every column sized to the rows it shows.
    const bool two_names = tensor_names_differ(d);
    auto name_of = [](const std::string& name) { return name.empty() ? std::string("\xE2\x80\x94") : escape_for_display(name, 200); };
    std::vector<std::string> changes, names_a, names_b, types, shapes;
    for (size_t k = 0; k < rows.size() && k < kMeasuredRows; ++k) {
        const TensorChange& c = d.tensors[rows[k]];
        changes.push_back(joined(tensor_change_names(c)));
        names_a.push_back(name_of(two_names || !c.name_a.empty() ? c.name_a : c.name_b));
        if (two_names) names_b.push_back(name_of(c.name_b));
        types.push_back(tensor_type_text(c));
        shapes.push_back(tensor_shape_text(c));
    }
    const float room = ImGui::GetContentRegionAvail().x;
    const int columns = 4 + (two_names ? 1 : 0) + (r.numeric ? 3 : 0);
    if (!ImGui::BeginTable("diff_tensors", columns, kTableFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(changes, "change", room * 0.2f));
    ImGui::TableSetupColumn(two_names ? "A" : "tensor", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(names_a, "tensor", room * 0.35f));
    if (two_names) ImGui::TableSetupColumn("B", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(names_b, "B", room * 0.35f));
    ImGui::TableSetupColumn("type", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width(types, "type", room * 0.2f));
    ImGui::TableSetupColumn("shape (ne, fastest first)", ImGuiTableColumnFlags_WidthFixed,
                            ui::fitted_width(shapes, "shape (ne, fastest first)", room * 0.3f));
    if (r.numeric)
        for (const char* metric : {"RMSE", "NMSE", "cosine"}) ImGui::TableSetupColumn(metric, ImGuiTableColumnFlags_WidthFixed, 80);
    ImGui::TableHeadersRow();
    const Model& model = *ctx.doc.model();
    ui::clipped_rows(rows, [&](size_t i) {
        const TensorChange& c = d.tensors[i];
        ImGui::TableNextColumn();
        const TensorInfo* in_b = c.name_b.empty() ? nullptr : model.find_tensor(c.name_b);
        const size_t index = in_b ? static_cast<size_t>(in_b - model.tensors.data()) : 0;
        const bool selected = in_b && ctx.doc.selection == Selection{SelectionKind::tensor, index};
        if (ui::cell_selectable(joined(tensor_change_names(c)), selected, ImGuiSelectableFlags_SpanAllColumns) && in_b)
            ctx.doc.select({SelectionKind::tensor, index});
        ImGui::TableNextColumn();
        ui::cell_text(name_of(two_names || !c.name_a.empty() ? c.name_a : c.name_b), ui::Elide::start);
        if (two_names) {
            ImGui::TableNextColumn();
            ui::cell_text(name_of(c.name_b), ui::Elide::start);
        }
        ImGui::TableNextColumn();
        ui::cell_text(tensor_type_text(c));
        ImGui::TableNextColumn();
        ui::cell_text(tensor_shape_text(c));
        if (!r.numeric) return;
        if (c.error) {
            for (double v : {c.error->rmse, c.error->nmse, c.error->cosine}) {
                ImGui::TableNextColumn();
                ui::cell_text(number_text(v));
            }
        } else if (!c.failed.empty()) {
            ImGui::TableNextColumn();
            ui::cell_text_dim(escape_for_display(c.failed, 200));
        }
    });
    ImGui::EndTable();
}

void DiffPanel::recipe_tab(PanelContext& ctx) {
    const ModelDiffRun& r = *m_result;
    ui::label_value("base", (r.base_a.empty() ? "\xE2\x80\x94" : r.base_a) + "  \xE2\x86\x92  " + (r.base_b.empty() ? "\xE2\x80\x94" : r.base_b));
    if (r.recipe_groups.empty()) {
        ui::text_dim("Every tensor present in both files has the same type.");
    } else if (ImGui::BeginTable("diff_recipe", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit)) {
        ui::table_columns({{"tensor kind", ImGuiTableColumnFlags_WidthFixed, 260},
                           {"layers", ImGuiTableColumnFlags_WidthFixed, 320},
                           {"A \xE2\x86\x92 B", ImGuiTableColumnFlags_WidthStretch}});
        for (const RecipeChangeGroup& g : r.recipe_groups) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::cell_text(escape_for_display(g.kind, 120), ui::Elide::start);
            ImGui::TableNextColumn();
            const std::string layers = recipe_group_layers_text(g);
            ui::cell_text(layers.empty() ? "\xE2\x80\x94" : layers);
            ImGui::TableNextColumn();
            ui::cell_text((g.from.empty() ? "\xE2\x80\x94" : g.from) + " \xE2\x86\x92 " + (g.to.empty() ? "\xE2\x80\x94" : g.to));
        }
        ImGui::EndTable();
    }
    ImGui::Spacing();
    ui::text_colored(palette().accent, "llama-quantize commands");
    command_line("A", r.command_a, ctx.fonts);
    command_line("B", r.command_b, ctx.fonts);
}

void DiffPanel::layers_tab() {
    const ModelDiff& d = m_result->diff;
    if (d.layers.empty()) {
        ui::text_dim("No paired tensor was compared.");
        return;
    }
    if (!ImGui::BeginTable("diff_layers", 5, kTableFlags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ui::table_columns({{"layer", ImGuiTableColumnFlags_WidthFixed, 70},
                       {"tensors", ImGuiTableColumnFlags_WidthFixed, 70},
                       {"RMSE", ImGuiTableColumnFlags_WidthFixed, 90},
                       {"max |e|", ImGuiTableColumnFlags_WidthFixed, 90},
                       {"worst tensor", ImGuiTableColumnFlags_WidthStretch}});
    for (const LayerError& l : d.layers) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::cell_text(l.layer < 0 ? "outside" : std::to_string(l.layer));
        ImGui::TableNextColumn();
        ui::cell_text(std::to_string(l.tensors));
        ImGui::TableNextColumn();
        ui::cell_text(number_text(l.rmse));
        ImGui::TableNextColumn();
        ui::cell_text(number_text(l.max_abs));
        ImGui::TableNextColumn();
        ui::cell_text(escape_for_display(l.worst_tensor, 200), ui::Elide::start);
    }
    ImGui::EndTable();
}

void DiffPanel::draw(PanelContext& ctx) {
    poll();
    follow_pair(ctx);
    toolbar(ctx);
    if (!m_result) {
        if (m_other.id() == 0) ui::text_dim("Open another model to compare this one with it, as mlens diff A B does.");
        return;
    }
    summary();
    if (!ImGui::BeginTabBar("diff_tabs")) return;
    const ModelDiffRun& r = *m_result;
    if (ImGui::BeginTabItem(("Metadata (" + std::to_string(r.diff.metadata.size()) + ")###metadata").c_str())) {
        metadata_tab();
        ImGui::EndTabItem();
    }
    const ImGuiTabItemFlags tensors_flags = std::exchange(m_show_tensors, false) ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem(("Tensors (" + std::to_string(r.diff.tensors.size()) + ")###tensors").c_str(), nullptr, tensors_flags)) {
        tensors_tab(ctx);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(("Recipe (" + std::to_string(r.recipe_changes.size()) + ")###recipe").c_str())) {
        recipe_tab(ctx);
        ImGui::EndTabItem();
    }
    if (r.numeric && ImGui::BeginTabItem("Per layer###layers")) {
        layers_tab();
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

}  // namespace mlens
