#include "widgets/array_viewer.h"

#include <algorithm>

#include "mlens/model/enum_names.h"
#include "mlens/text/escape.h"
#include "state/display_text.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

ArrayViewer::ArrayViewer(std::string key, std::shared_ptr<const ArrayIndex> array, std::string window_id, PieceEncoding encoding)
    : m_key(std::move(key)), m_array(std::move(array)), m_window_id(std::move(window_id)), m_encoding(encoding) {
    m_title = escape_for_display(m_key, 80) + "  [" + value_type_name(m_array->element_type) + " \xC3\x97 " +
        ui::with_separators(m_array->count) + "]###" + m_window_id;
}

bool ArrayViewer::draw(JobRunner& jobs, ImFont* mono) {
    bool open = true;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_FirstUseEver,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(620, 560), ImGuiCond_FirstUseEver);
    if (m_focus) {
        ImGui::SetNextWindowFocus();
        m_focus = false;
    }
    if (!ImGui::Begin(m_title.c_str(), &open)) {
        ImGui::End();
        return open;
    }
    m_search.poll();
    const ArrayIndex& a = *m_array;
    bool is_string = a.element_type == ValueType::string;
    bool is_enum = is_token_type_key(m_key);

    float avail = ImGui::GetContentRegionAvail().x;
    bool focus_search = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    if (ui::search_box("search", is_string ? "search text or index" : "search value or index", m_query, avail * 0.55f, focus_search))
        m_search.start(jobs, m_array, m_key, m_query, m_encoding);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110);
    bool go = ImGui::InputScalar("##goto", ImGuiDataType_S64, &m_goto, nullptr, nullptr, "%lld", ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    go = ImGui::Button("Go to index") || go;
    if (go && a.count > 0) {
        // Going to an index shows the whole array again.
        m_query.clear();
        m_search.clear();
        m_scroll_to = static_cast<uint64_t>(std::clamp<int64_t>(m_goto, 0, static_cast<int64_t>(a.count - 1)));
    }

    bool filtered = m_search.active();
    uint64_t rows = filtered ? m_search.matches().size() : a.count;
    if (filtered) {
        if (m_search.running())
            ui::text_dim("searching\xE2\x80\xA6 " + std::to_string(static_cast<int>(m_search.progress() * 100)) + "%");
        else
            ui::text_dim(ui::with_separators(rows) + " of " + ui::with_separators(a.count) + " match");
    } else {
        ui::text_dim(ui::with_separators(a.count) + " elements \xC2\xB7 " + std::string(value_type_name(a.element_type)));
    }

    int columns = is_enum ? 3 : 2;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable;
    if (ImGui::BeginTable("elements", columns, flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("Index", ImGuiTableColumnFlags_WidthFixed, 90);
        ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch);
        if (is_enum) ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthFixed, 120);
        ImGui::TableHeadersRow();
        float row_h = ImGui::GetTextLineHeightWithSpacing();
        if (m_scroll_to && !filtered) { ImGui::SetScrollY(static_cast<float>(*m_scroll_to) * row_h); }
        // ImGuiListClipper counts rows in int.
        int count = static_cast<int>(std::min<uint64_t>(rows, INT32_MAX));
        ImGuiListClipper clipper;
        clipper.Begin(count, row_h);
        while (clipper.Step()) {
            for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
                uint64_t i = filtered ? m_search.matches()[static_cast<size_t>(r)] : static_cast<uint64_t>(r);
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                std::string copy_text;
                std::string raw;
                std::optional<Scalar> scalar;
                if (is_string) {
                    raw = a.string_at(i, 4096);
                    copy_text = visible_piece_text(raw, 4096, m_encoding);
                } else if (value_type_size(a.element_type) > 0) {
                    scalar = a.scalar_at(i);
                    copy_text = scalar->to_string();
                }
                ImGui::PushID(r);
                ImGui::PushFont(mono);
                ImGui::PushStyleColor(ImGuiCol_Text, palette().dim);
                ImGui::Selectable(std::to_string(i).c_str(), false,
                                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap);
                ImGui::PopStyleColor();
                ImGui::PopFont();
                ui::copy_menu("copy", {{"value", copy_text}, {"index", std::to_string(i)}});
                ImGui::PopID();
                ImGui::TableNextColumn();
                if (is_string) {
                    ui::piece(visible_piece(raw, 200, m_encoding));
                } else if (scalar) {
                    ImGui::PushFont(mono);
                    ui::text(copy_text);
                    ImGui::PopFont();
                    if (is_enum) {
                        ImGui::TableNextColumn();
                        const char* name = token_type_name(scalar->as_int());
                        ui::text_colored(palette().accent, name ? name : "?");
                    }
                } else {
                    ui::text_dim("(nested array)");
                }
            }
        }
        ImGui::EndTable();
    }
    m_scroll_to.reset();
    ImGui::End();
    return open;
}

}  // namespace mlens
