#include "panels/model_error_table.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "panels/weights_tables.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr ErrorColumn kColumns[] = {ErrorColumn::name, ErrorColumn::layer,   ErrorColumn::types,  ErrorColumn::rmse,
                                    ErrorColumn::nmse, ErrorColumn::max_abs, ErrorColumn::cosine, ErrorColumn::snr_db};
constexpr int kColumnCount = static_cast<int>(sizeof kColumns / sizeof kColumns[0]);

std::string types_text(const TensorError& t) { return t.type_a == t.type_b ? t.type_a : t.type_a + " \xE2\x86\x92 " + t.type_b; }

void metric_cells(const TensorError& t) {
    const TensorComparison& e = *t.error;
    for (double v : {e.rmse, e.nmse, e.max_abs, e.cosine, e.snr_db}) {
        ImGui::TableNextColumn();
        ui::text(number_text(v));
    }
}

}  // namespace

std::optional<size_t> ModelErrorTable::draw(const ModelError& error, const FontSet& fonts, std::optional<size_t> selected_tensor) {
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_Sortable | ImGuiTableFlags_Hideable;
    if (!ImGui::BeginTable("model_error_tensors", kColumnCount, flags)) return std::nullopt;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("Tensor", ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_DefaultSort, 2.4f);
    // Short columns are as wide as their header and its sort arrow, so neither is cut.
    const auto header_width = [](const char* label) { return ImGui::CalcTextSize(label).x + 1.5f * ImGui::GetFontSize(); };
    const char* types = "Types (ref \xE2\x86\x92 this)";
    ImGui::TableSetupColumn("Layer", ImGuiTableColumnFlags_WidthFixed, header_width("Layer"));
    ImGui::TableSetupColumn(types, ImGuiTableColumnFlags_WidthFixed, header_width(types));
    ImGui::TableSetupColumn("RMSE", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("NMSE", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn(
        "max |a\xE2\x88\x92"
        "b|",
        ImGuiTableColumnFlags_WidthStretch, 1.15f);
    ImGui::TableSetupColumn("cosine", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("SNR dB", ImGuiTableColumnFlags_WidthStretch, 0.9f);
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
        if (specs->SpecsCount > 0) {
            m_column = kColumns[std::clamp<int>(specs->Specs[0].ColumnIndex, 0, kColumnCount - 1)];
            m_descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
        }
        specs->SpecsDirty = false;
        m_sorted = false;
    }
    if (!m_sorted) {
        m_order = sorted_tensor_rows(error, m_column, m_descending);
        m_sorted = true;
    }

    std::optional<size_t> clicked;
    ui::clipped_rows(m_order, [&](size_t row) {
        const TensorError& t = error.tensors[row];
        ImGui::TableNextColumn();
        ImGui::PushFont(fonts.mono());
        bool selected = selected_tensor && *selected_tensor == t.pair.b.tensor;
        std::string name = escape_for_display(t.name_b, 120);
        // Cut in the middle at word boundaries to the cell; the tooltip has both names whole.
        std::string shown = ui::elided_text(name, ImGui::GetContentRegionAvail().x, ui::Elide::start);
        if (ImGui::Selectable((shown + "##name").c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) clicked = row;
        ImGui::PopFont();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("reference: %s\nthis: %s\nClick: show it in the Weights panel", escape_for_display(t.name_a, 160).c_str(),
                              name.c_str());
        ImGui::TableNextColumn();
        ui::text(t.layer < 0 ? "other" : std::to_string(t.layer));
        ImGui::TableNextColumn();
        ui::text_dim(escape_for_display(types_text(t), 60));
        if (t.error) {
            metric_cells(t);
        } else {
            ImGui::TableNextColumn();
            ui::text_colored(palette().warning, escape_for_display(t.failed, 200));
        }
    });
    ImGui::EndTable();
    return clicked;
}

}  // namespace mlens
