#include "widgets/table_cell.h"

#include <algorithm>

#include <imgui_internal.h>

#include "state/display_text.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens::ui {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";

bool breaks_after(char c) {
    return c == ' ' || c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == ',' || c == ';' || c == '=' || c == '(' ||
        c == '[' || c == '|';
}

float imgui_width(std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; }

// The popup must be submitted while it is open even when the mouse has left the cell.
void copy_popup_if_open(std::string_view text) {
    ImGui::PushID(text.data(), text.data() + text.size());
    if (ImGui::IsPopupOpen("cell_copy") && ImGui::BeginPopup("cell_copy")) {
        if (ImGui::MenuItem("Copy")) ImGui::SetClipboardText(std::string(text).c_str());
        ImGui::EndPopup();
    }
    ImGui::PopID();
}

// Tooltip with the whole text, and the two ways to copy it, for the text drawn in [min, max].
void whole_text_on_hover(std::string_view text, bool elided, ImVec2 min, ImVec2 max) {
    if (!ImGui::IsWindowHovered() || !ImGui::IsMouseHoveringRect(min, max)) {
        copy_popup_if_open(text);
        return;
    }
    // The tooltip window would become ImGui's last item; callers attach menus to their cell.
    const ImGuiLastItemData last_item = GImGui->LastItemData;
    if (elided) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
        ui::text(text);
        ImGui::PopTextWrapPos();
        ui::text_dim("Ctrl+C or right-click to copy");
        ImGui::EndTooltip();
    }
    if (ui::ctrl_pressed('C')) ImGui::SetClipboardText(std::string(text).c_str());
    // A row's own context menu (opened by its Selectable earlier this frame) takes precedence.
    ImGui::PushID(text.data(), text.data() + text.size());
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Right) && !ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId))
        ImGui::OpenPopup("cell_copy");
    if (ImGui::BeginPopup("cell_copy")) {
        if (ImGui::MenuItem("Copy")) ImGui::SetClipboardText(std::string(text).c_str());
        ImGui::EndPopup();
    }
    ImGui::PopID();
    GImGui->LastItemData = last_item;
}

void draw_cell(std::string_view text, const ImVec4* color, Elide where = Elide::end) {
    std::string shown = elided_text(text, ImGui::GetContentRegionAvail().x, where);
    bool elided = shown != text;
    if (color)
        ui::text_colored(*color, shown);
    else
        ui::text(shown);
    whole_text_on_hover(text, elided, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

}  // namespace

size_t elide_length(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure) {
    std::vector<std::pair<size_t, float>> ends;  // byte end of each character, width up to it
    float width = 0.0f;
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        size_t len = utf8_decode(text.substr(i), cp);
        if (len == 0) len = 1;
        width += measure(text.substr(i, len));
        i += len;
        ends.emplace_back(i, width);
    }
    if (width <= max_width) return text.size();
    float room = max_width - measure(kEllipsis);
    size_t fit = 0;  // characters that fit before the ellipsis
    while (fit < ends.size() && ends[fit].second <= room) ++fit;
    for (size_t k = fit; k > 0; --k) {
        size_t end = ends[k - 1].first;
        char last = text[end - 1];
        bool before_space = end < text.size() && text[end] == ' ';
        if (breaks_after(last) || before_space) {
            while (end > 0 && text[end - 1] == ' ') --end;
            if (end > 0) return end;
        }
    }
    return fit == 0 ? 0 : ends[fit - 1].first;
}

size_t elide_start(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure) {
    std::vector<std::pair<size_t, float>> starts;  // byte start of each character, width before it
    float width = 0.0f;
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        size_t len = utf8_decode(text.substr(i), cp);
        if (len == 0) len = 1;
        starts.emplace_back(i, width);
        width += measure(text.substr(i, len));
        i += len;
    }
    if (width <= max_width) return 0;
    const float room = max_width - measure(kEllipsis);
    size_t tail = text.size();
    for (size_t k = starts.size(); k-- > 1;) {
        auto [at, before] = starts[k];
        if (width - before > room) break;
        if (breaks_after(text[at - 1])) tail = at;
    }
    return tail;
}

std::vector<std::string_view> wrap_lines(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start < text.size()) {
        const std::string_view rest = text.substr(start);
        size_t fits = 0;  // bytes of the characters that fit
        size_t word_end = 0;  // end of the last word that fits whole
        float width = 0.0f;
        while (fits < rest.size()) {
            uint32_t cp = 0;
            size_t len = utf8_decode(rest.substr(fits), cp);
            if (len == 0) len = 1;
            float w = measure(rest.substr(fits, len));
            if (width + w > max_width && fits > 0) break;
            width += w;
            fits += len;
            if (rest[fits - 1] != ' ' && (fits == rest.size() || rest[fits] == ' ')) word_end = fits;
        }
        size_t end = fits == rest.size() ? fits : word_end;
        if (end == 0) {
            // One word wider than the line: cut after its last boundary character that fits.
            end = fits;
            for (size_t k = fits; k > 1; --k)
                if (breaks_after(rest[k - 1])) {
                    end = k;
                    break;
                }
        }
        std::string_view line = rest.substr(0, end);
        while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
        lines.push_back(line);
        start += end;
        while (start < text.size() && text[start] == ' ') ++start;
    }
    return lines;
}

void wrapped_text(std::string_view text) {
    const std::vector<std::string_view> lines = wrap_lines(text, ImGui::GetContentRegionAvail().x, imgui_width);
    if (lines.empty()) ui::text("");
    for (std::string_view line : lines) ui::text(line);
}

std::string elided_text(std::string_view text, float max_width, Elide where) {
    // Most cells fit: one measure of the whole text decides.
    if (imgui_width(text) <= max_width) return std::string(text);
    if (where == Elide::start) {
        // A name without a word boundary to keep its end from is cut at the end instead.
        if (size_t tail = elide_start(text, max_width, imgui_width); tail < text.size()) return std::string(kEllipsis) + std::string(text.substr(tail));
    }
    size_t n = elide_length(text, max_width, imgui_width);
    if (n == text.size()) return std::string(text);
    return std::string(text.substr(0, n)) + std::string(kEllipsis);
}

void cell_text(std::string_view text, Elide where) { draw_cell(text, nullptr, where); }
void cell_text_colored(const ImVec4& color, std::string_view text) { draw_cell(text, &color); }
void cell_text_dim(std::string_view text) { draw_cell(text, &palette().dim); }

bool cell_selectable(std::string_view text, bool selected, ImGuiSelectableFlags flags, Elide where) {
    ImVec2 min = ImGui::GetCursorScreenPos();
    std::string shown = elided_text(text, ImGui::GetContentRegionAvail().x, where);
    bool elided = shown != text;
    ImVec2 size = ImGui::CalcTextSize(shown.c_str());
    bool clicked = ImGui::Selectable((shown + "##cell").c_str(), selected, flags);
    whole_text_on_hover(text, elided, min, ImVec2(min.x + size.x, min.y + std::max(size.y, ImGui::GetItemRectSize().y)));
    return clicked;
}

bool cell_piece(std::string_view raw, size_t max_chars) {
    const std::string text = visible_piece_text(raw, max_chars);
    if (imgui_width(text) > ImGui::GetContentRegionAvail().x) {
        draw_cell(text, nullptr);
        return true;
    }
    ImGui::BeginGroup();
    ui::piece(visible_piece(raw, max_chars));
    ImGui::EndGroup();
    whole_text_on_hover(text, false, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
    return false;
}

namespace {

// A header needs room for its sort arrow too.
float header_width(const char* header) { return ImGui::CalcTextSize(header, nullptr, true).x + ImGui::GetFontSize() * 0.8f; }

}  // namespace

float fitted_width(std::string_view widest, const char* header, float max_width) {
    float padding = ImGui::GetStyle().CellPadding.x * 2.0f;
    float w = std::max(imgui_width(widest), header_width(header));
    return std::min(w + padding, max_width);
}

float fitted_width(const std::vector<std::string>& texts, const char* header, float max_width) {
    float w = header_width(header);
    for (const std::string& t : texts) w = std::max(w, imgui_width(t));
    return std::min(w + ImGui::GetStyle().CellPadding.x * 2.0f, max_width);
}

void table_columns(std::initializer_list<TableColumn> columns) {
    for (const TableColumn& c : columns) ImGui::TableSetupColumn(c.name, c.flags, c.width);
    ImGui::TableHeadersRow();
}

}  // namespace mlens::ui
