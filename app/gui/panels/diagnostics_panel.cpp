#include "panels/diagnostics_panel.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "mlens/text/text_search.h"
#include "theme.h"
#include "widgets/load_verdict.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// Up to this many rows the table wraps messages (rows of different heights, no clipper).
constexpr size_t kWrappedRows = 300;

}  // namespace

void DiagnosticsPanel::refresh(const Model& m) {
    if (m_built && m_applied_filter == m_filter && m_applied_errors == m_show_errors && m_applied_warnings == m_show_warnings) return;
    m_built = true;
    m_applied_filter = m_filter;
    m_applied_errors = m_show_errors;
    m_applied_warnings = m_show_warnings;
    m_rows.clear();
    m_codes.clear();
    m_fields.clear();
    // The one listing order (truncation.h): a cut file's summary once, without a row per tensor
    // it stands for (the Health panel lists those tensors under it).
    for (const ListedDiagnostic& listed : listed_diagnostics(m)) {
        const size_t i = listed.diagnostic;
        const Diagnostic& d = m.diagnostics[i];
        if (d.severity == Severity::error ? !m_show_errors : !m_show_warnings) continue;
        if (!m_filter.empty() && !contains_folded(code_name(d.code), m_filter) && !contains_folded(d.field, m_filter) &&
            !contains_folded(d.message, m_filter))
            continue;
        m_rows.push_back(i);
        m_codes.push_back(std::string(code_name(d.code)));
        m_fields.push_back(escape_for_display(d.field, 80));
    }
}

std::string DiagnosticsPanel::badge(const Document& doc) const {
    if (!doc.is_model() || doc.model()->diagnostics.empty()) return {};
    return std::to_string(listed_count(*doc.model()));  // the rows the panel lists
}

void DiagnosticsPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const Model& m = *doc.model();
    // Whether llama.cpp loads the file, and why not: the reasons come before the reader's findings.
    const Loadability& loads = doc.index()->loads;
    ui::text_dim("llama.cpp:");
    ImGui::SameLine();
    ui::load_verdict_text(loads);
    ui::load_reasons(loads);
    ImGui::Separator();
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
    ImGui::Checkbox(("Errors (" + std::to_string(listed_error_count(m)) + ")").c_str(), &m_show_errors);
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

    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    // Codes, fields and offsets sized to the longest; the message takes the rest. A short list
    // wraps messages at word boundaries; a long one (clipped rows need one height) elides them.
    const bool wrap = rows.size() <= kWrappedRows;
    float avail = ImGui::GetContentRegionAvail().x;
    const std::vector<std::string>& codes = m_codes;
    const std::vector<std::string>& fields = m_fields;
    float code_w = ui::fitted_width(codes, "Code", avail * 0.3f);
    ImGui::PushFont(ctx.fonts.mono());
    float field_w = ui::fitted_width(fields, "Field", avail * 0.22f);
    float offset_w = ui::fitted_width(ui::hex_offset(0), "Offset", avail * 0.15f);
    ImGui::PopFont();
    if (!ImGui::BeginTable("diagnostics", 5, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, ui::fitted_width("\xE2\x9A\xA0 warning", "Severity", avail));
    ImGui::TableSetupColumn("Code", ImGuiTableColumnFlags_WidthFixed, code_w);
    ImGui::TableSetupColumn("Field", ImGuiTableColumnFlags_WidthFixed, field_w);
    ImGui::TableSetupColumn("Offset", ImGuiTableColumnFlags_WidthFixed, offset_w);
    ImGui::TableSetupColumn("Message", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    auto draw_row = [&](size_t r) {
        size_t i = rows[r];
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
        ImGui::TableNextColumn();
        ui::cell_text(codes[r]);
        ImGui::TableNextColumn();
        ImGui::PushFont(ctx.fonts.mono());
        ui::cell_text(fields[r]);
        ImGui::TableNextColumn();
        ui::text_dim(d.offset ? ui::hex_offset(*d.offset) : "-");
        ImGui::PopFont();
        ImGui::TableNextColumn();
        if (wrap) {
            ImGui::PushTextWrapPos(0.0f);
            ui::text(d.message);
            ImGui::PopTextWrapPos();
        } else {
            ui::cell_text(d.message);
        }
        ImGui::PopID();
    };
    if (wrap) {
        for (size_t r = 0; r < rows.size(); ++r) draw_row(r);
    } else {
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(rows.size()));
        while (clipper.Step())
            for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) draw_row(static_cast<size_t>(r));
    }
    ImGui::EndTable();
}

}  // namespace mlens
