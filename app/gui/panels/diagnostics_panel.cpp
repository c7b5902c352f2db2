#include "panels/diagnostics_panel.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "text_search.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

void DiagnosticsPanel::refresh(const Model& m) {
    if (m_built && m_applied_filter == m_filter && m_applied_errors == m_show_errors &&
        m_applied_warnings == m_show_warnings)
        return;
    m_built = true;
    m_applied_filter = m_filter;
    m_applied_errors = m_show_errors;
    m_applied_warnings = m_show_warnings;
    m_rows.clear();
    for (size_t i = 0; i < m.diagnostics.size(); ++i) {
        const Diagnostic& d = m.diagnostics[i];
        if (d.severity == Severity::error ? !m_show_errors : !m_show_warnings) continue;
        if (!m_filter.empty() && !contains_folded(code_name(d.code), m_filter) && !contains_folded(d.field, m_filter) &&
            !contains_folded(d.message, m_filter))
            continue;
        m_rows.push_back(i);
    }
}

std::string DiagnosticsPanel::badge(const Document& doc) const {
    if (!doc.ready() || doc.model->diagnostics.empty()) return {};
    return std::to_string(doc.model->diagnostics.size());
}

void DiagnosticsPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const Model& m = *doc.model;
    if (m.diagnostics.empty()) {
        ImGui::Spacing();
        ui::text_colored(palette().ok, "\xE2\x9C\x93 No diagnostics: every check passed.");
        ui::text_dim("The reader validates counts, lengths, offsets, types, alignment and tensor ranges.");
        return;
    }
    bool focus = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    ui::search_box("filter", "filter code, field, message (Ctrl+F)", m_filter, 320, focus);
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
    ImGui::Checkbox(("Errors (" + std::to_string(m.error_count()) + ")").c_str(), &m_show_errors);
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, palette().warning);
    ImGui::Checkbox(("Warnings (" + std::to_string(m.warning_count()) + ")").c_str(), &m_show_warnings);
    ImGui::PopStyleColor();
    if (m.partial) {
        ImGui::SameLine();
        ui::text_colored(palette().error, "parsing stopped early: later fields are missing");
    }

    refresh(m);
    const std::vector<size_t>& rows = m_rows;

    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                            ImGuiTableFlags_BordersInnerV;
    if (!ImGui::BeginTable("diagnostics", 5, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, 90);
    ImGui::TableSetupColumn("Code", ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableSetupColumn("Field", ImGuiTableColumnFlags_WidthStretch, 2.2f);
    ImGui::TableSetupColumn("Offset", ImGuiTableColumnFlags_WidthFixed, 95);
    ImGui::TableSetupColumn("Message", ImGuiTableColumnFlags_WidthStretch, 5.0f);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(rows.size()));
    while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            size_t i = rows[static_cast<size_t>(r)];
            const Diagnostic& d = m.diagnostics[i];
            bool error = d.severity == Severity::error;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(static_cast<int>(i));
            ImGui::PushStyleColor(ImGuiCol_Text, error ? palette().error : palette().warning);
            bool selected = doc.selection == Selection{SelectionKind::diagnostic, i};
            if (ImGui::Selectable(error ? "\xE2\x9C\x96 error" : "\xE2\x9A\xA0 warning", selected,
                                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
                doc.select({SelectionKind::diagnostic, i});
            ImGui::PopStyleColor();
            ui::copy_menu("copy", {{"line", d.to_line()}, {"message", d.message}});
            ImGui::PopID();
            ImGui::TableNextColumn();
            ui::text(std::string(code_name(d.code)));
            ImGui::TableNextColumn();
            ImGui::PushFont(ctx.fonts.mono());
            ui::text(escape_for_display(d.field, 80));
            ImGui::TableNextColumn();
            ui::text_dim(d.offset ? ui::hex_offset(*d.offset) : "-");
            ImGui::PopFont();
            ImGui::TableNextColumn();
            ui::text(d.message);
            if (ImGui::IsItemHovered() && ImGui::GetItemRectSize().x > ImGui::GetContentRegionAvail().x) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
                ui::text(d.message);
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
        }
    }
    ImGui::EndTable();
}

}  // namespace mlens
