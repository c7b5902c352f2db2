#include "panels/metadata_panel.h"

#include <algorithm>
#include <utility>

#include <imgui.h>

#include "mlens/model/metadata_text.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "mlens/text/text_search.h"
#include "panels/panel_links.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

void MetadataPanel::refresh(const Document& doc) {
    if (m_built && m_applied_filter == m_filter && m_applied_group == m_group) return;
    m_built = true;
    m_applied_filter = m_filter;
    m_applied_group = m_group;
    m_rows.clear();
    const Model& m = *doc.model();
    const auto& groups = doc.index()->metadata_groups;
    const MetadataGroup* group = m_applied_group && *m_applied_group < groups.size() ? &groups[*m_applied_group] : nullptr;
    auto consider = [&](size_t i) {
        const MetadataEntry& e = m.metadata[i];
        if (m_filter.empty() || contains_folded(e.key, m_filter) || contains_folded(metadata_value_text(e, 8, 200), m_filter))
            m_rows.push_back(i);
    };
    if (group)
        for (size_t i : group->entries) consider(i);
    else
        for (size_t i = 0; i < m.metadata.size(); ++i) consider(i);
}

void MetadataPanel::open_viewer(const Document& doc, size_t entry) {
    const MetadataEntry& e = doc.model()->metadata[entry];
    if (!e.value.array) return;
    std::string id = "array_" + std::to_string(doc.id) + "_" + std::to_string(entry);
    for (auto& v : m_viewers) {
        if (v->window_id() == id) {
            v->focus();
            return;
        }
    }
    const DocumentIndex* index = doc.index().get();
    const bool vocabulary = index && index->tokenizer.tokens && entry == index->tokenizer.tokens_entry;
    const PieceEncoding encoding = vocabulary ? index->tokenizer.encoding : PieceEncoding::plain;
    m_viewers.push_back(std::make_unique<ArrayViewer>(e.key, e.value.array, id, encoding));
}

void MetadataPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const Model& m = *doc.model();
    bool focus = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    ui::search_box("filter", "filter keys and values (Ctrl+F)", m_filter, 320, focus);
    const auto& groups = doc.index()->metadata_groups;
    if (m_group && *m_group < groups.size()) {
        ImGui::SameLine();
        std::string chip = "group: " + groups[*m_group].label + "  \xE2\x9C\x95";
        if (ImGui::SmallButton(chip.c_str())) doc.follow(metadata_group_link(*doc.index(), std::nullopt));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show all groups");
    }
    refresh(doc);
    ImGui::SameLine();
    ui::text_dim(std::to_string(m_rows.size()) + " / " + std::to_string(m.metadata.size()) + " keys");
    ImGui::SameLine(0, 24);
    m_editor.toolbar(ctx);
    m_editor.staged_view(ctx);

    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_Hideable | ImGuiTableFlags_Reorderable;
    // Key, type and count sized to content (keys to at most 40%), the value takes the rest.
    float avail = ImGui::GetContentRegionAvail().x;
    if (m_key_width < 0.0f) {
        std::string widest;
        for (size_t i = 0; i < std::min<size_t>(m.metadata.size(), 4096); ++i)
            if (m.metadata[i].key.size() > widest.size()) widest = escape_for_display(m.metadata[i].key, 120);
        m_key_width = ui::fitted_width(widest, "Key", 1e6f);
    }
    if (!ImGui::BeginTable("metadata", 4, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Key", ImGuiTableColumnFlags_WidthFixed, std::min(m_key_width + 4.0f, avail * 0.4f));
    ImGui::TableSetupColumn("Type", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width("ARRAY[FLOAT32]", "Type", avail));
    ImGui::TableSetupColumn("Count", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width("262,144", "Count", avail));
    ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    ui::clipped_rows(m_rows, [&](size_t i) {
        const MetadataEntry& e = m.metadata[i];
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(i));
        bool selected = doc.selection == Selection{SelectionKind::metadata, i};
        std::string key = escape_for_display(e.key, 120);
        if (ui::cell_selectable(
                key, selected,
                ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap | ImGuiSelectableFlags_AllowDoubleClick,
                ui::Elide::start)) {
            doc.select({SelectionKind::metadata, i});
            if (ImGui::IsMouseDoubleClicked(0) && e.value.is_array()) open_viewer(doc, i);
        }
        if (ImGui::BeginPopupContextItem("row")) {
            if (ImGui::MenuItem("Copy key")) ImGui::SetClipboardText(e.key.c_str());
            if (ImGui::MenuItem("Copy value")) ImGui::SetClipboardText(metadata_copy_text(e).c_str());
            ImGui::Separator();
            m_editor.row_menu(ctx, i);
            ImGui::EndPopup();
        }
        ImGui::TableNextColumn();
        ui::cell_text_dim(format_type(e.value));
        ImGui::TableNextColumn();
        ui::cell_text_dim(metadata_count_text(e.value));
        ImGui::TableNextColumn();
        if (e.value.is_array()) {
            if (ImGui::SmallButton("view")) {
                doc.select({SelectionKind::metadata, i});
                open_viewer(doc, i);
            }
            ImGui::SameLine();
        }
        ImGui::PushFont(ctx.fonts.mono());
        ui::cell_text(metadata_value_text(e, 8, 160));
        ImGui::PopFont();
        ImGui::PopID();
    });
    ImGui::EndTable();
}

bool MetadataPanel::accept_link(std::string_view link, Document& doc) {
    if (std::optional<LinkedIndex> group = parse_metadata_group_link(link, *doc.index())) {
        m_group = group->index;
        return true;
    }
    m_linked_array = parse_metadata_array_link(link, *doc.model());
    return m_linked_array.has_value();
}

void MetadataPanel::draw_windows(PanelContext& ctx) {
    if (auto entry = std::exchange(m_linked_array, std::nullopt)) open_viewer(ctx.doc, *entry);
    std::erase_if(m_viewers, [&](auto& v) { return !v->draw(ctx.jobs, ctx.fonts.mono()); });
    m_editor.draw_windows(ctx);
}

}  // namespace mlens
