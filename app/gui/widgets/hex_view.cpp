#include "widgets/hex_view.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "theme.h"

namespace mlens {

namespace {

constexpr int64_t kWheelRows = 3;

bool in_range(uint64_t offset, const ByteRange& r) { return r.length > 0 && offset >= r.offset && offset - r.offset < r.length; }

// The first row after keyboard and mouse-wheel input while the view is hovered.
int64_t scrolled_row(int64_t row, int64_t page) {
    if (!ImGui::IsWindowHovered()) return row;
    row -= std::lround(ImGui::GetIO().MouseWheel * static_cast<float>(kWheelRows));
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageDown))) row += page;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageUp))) row -= page;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home))) row = 0;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End))) row = INT64_MAX;
    return row;
}

void byte_tooltip(uint64_t offset, const uint8_t* bytes, uint64_t available) {
    ImGui::BeginTooltip();
    char head[64];
    std::snprintf(head, sizeof head, "offset 0x%" PRIX64 " (%" PRIu64 ")\nbyte %u", offset, offset, bytes[0]);
    std::string tip = head;
    if (available >= 4) {
        uint32_t u32 = 0;
        for (int k = 3; k >= 0; --k) u32 = (u32 << 8) | bytes[k];
        tip += "\nu32 LE " + std::to_string(u32);
    }
    if (available >= 8) {
        uint64_t u64 = 0;
        for (int k = 7; k >= 0; --k) u64 = (u64 << 8) | bytes[k];
        tip += "\nu64 LE " + std::to_string(u64);
    }
    ImGui::TextUnformatted(tip.c_str());
    ImGui::EndTooltip();
}

}  // namespace

std::optional<uint64_t> hex_view(const char* id, HexViewState& state, uint64_t file_size, const HexReader& read, ByteRange highlight,
                                 ImFont* mono) {
    std::optional<uint64_t> hovered;
    ImGui::PushID(id);
    ImGui::PushFont(mono);
    const float char_w = ImGui::CalcTextSize("0").x;
    const float line_h = ImGui::GetTextLineHeight();
    const float pitch = ImGui::GetTextLineHeightWithSpacing();
    const float bar_w = ImGui::GetStyle().ScrollbarSize;
    const int offset_digits = file_size > 0xFFFFFFFFull ? 12 : 8;
    // 16 bytes per row when they fit, else 8, else 4 (a narrow inspector pane keeps its ASCII column).
    const auto row_chars = [&](uint64_t n) { return static_cast<float>(offset_digits + 2 + n * 3 + 2 + n) * char_w; };
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const uint64_t per_row = avail.x - bar_w >= row_chars(16) ? 16 : avail.x - bar_w >= row_chars(8) ? 8 : 4;
    const uint64_t half = per_row / 2;
    // Column x positions in characters: offset, two spaces, n × "XX " with an extra space in the
    // middle, one space, then the ASCII column.
    const float hex_x = static_cast<float>(offset_digits + 2) * char_w;
    const float ascii_x = hex_x + static_cast<float>(per_row * 3 + 2) * char_w;
    const float height = std::max(avail.y, pitch * kHexMinRows);

    // The child's content is one row taller than the child, so that ImGui gives the mouse wheel
    // over it to this view rather than to the window around it; the rows are drawn at fixed
    // positions and the child's own scroll stays at 0.
    ImGui::BeginChild("rows", ImVec2(0, height), false, ImGuiWindowFlags_NoScrollbar);
    const ImVec2 origin = ImGui::GetWindowPos();
    const ImVec2 size = ImGui::GetWindowSize();
    const ImVec2 pad = ImGui::GetCurrentWindow()->WindowPadding;  // the child's own (none without a border)
    ImGui::Dummy(ImVec2(1.0f, size.y + pitch));
    ImGui::SetScrollY(0.0f);
    const int64_t visible_rows = std::max<int64_t>(1, static_cast<int64_t>((size.y - 2 * pad.y) / pitch));
    const int64_t total_rows = static_cast<int64_t>((file_size + per_row - 1) / per_row);
    const int64_t last_top = std::max<int64_t>(0, total_rows - visible_rows);
    int64_t top_row = static_cast<int64_t>((state.m_scroll_to ? *state.m_scroll_to : state.m_top) / per_row);
    state.m_scroll_to.reset();
    top_row = std::clamp<int64_t>(scrolled_row(top_row, visible_rows), 0, last_top);
    const ImRect bar(ImVec2(origin.x + size.x - bar_w, origin.y), ImVec2(origin.x + size.x, origin.y + size.y));
    ImS64 bar_row = top_row;
    ImGui::ScrollbarEx(bar, ImGui::GetID("scroll"), ImGuiAxis_Y, &bar_row, visible_rows, total_rows, ImDrawFlags_None);
    top_row = std::clamp<int64_t>(bar_row, 0, last_top);
    const uint64_t first = static_cast<uint64_t>(top_row) * per_row;
    state.m_top = first;

    // The rows shown and the 7 bytes after them (the tooltip's u64), read again only when they change.
    const ByteRange wanted{first,
                           std::min<uint64_t>(file_size - std::min(file_size, first), static_cast<uint64_t>(visible_rows) * per_row + 7)};
    if (wanted.offset != state.m_asked.offset || wanted.length != state.m_asked.length) {
        state.m_bytes.resize(wanted.length);
        state.m_bytes.resize(wanted.length ? read(wanted.offset, wanted.length, state.m_bytes.data()) : 0);
        state.m_asked = wanted;
    }
    const std::vector<uint8_t>& bytes = state.m_bytes;
    const uint64_t shown = std::min<uint64_t>(bytes.size(), static_cast<uint64_t>(visible_rows) * per_row);

    const ImU32 highlight_col = ImGui::GetColorU32(palette().highlight_bg);
    const ImU32 hover_col = ImGui::GetColorU32(ImGuiCol_HeaderHovered);
    const ImU32 dim_col = ImGui::GetColorU32(palette().dim);
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool window_hovered = ImGui::IsWindowHovered() && !bar.Contains(mouse);
    std::optional<uint64_t> hovered_index;
    for (uint64_t row = 0; row * per_row < shown; ++row) {
        const ImVec2 at(origin.x + pad.x, origin.y + pad.y + static_cast<float>(row) * pitch);
        const uint64_t row_offset = first + row * per_row;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%0*" PRIX64, offset_digits, row_offset);
        draw->AddText(at, dim_col, buf);
        for (uint64_t col = 0; col < per_row && row * per_row + col < shown; ++col) {
            const uint64_t i = row * per_row + col;
            const float x = at.x + hex_x + static_cast<float>(col * 3 + (col >= half ? 1 : 0)) * char_w;
            const float ax = at.x + ascii_x + static_cast<float>(col) * char_w;
            const ImVec2 cell_min(x - char_w * 0.5f, at.y), cell_max(x + char_w * 2.5f, at.y + line_h);
            const bool hot =
                window_hovered && mouse.x >= cell_min.x && mouse.x < cell_max.x && mouse.y >= cell_min.y && mouse.y < cell_max.y;
            if (hot) hovered_index = i;
            if (in_range(row_offset + col, highlight) || hot) {
                const ImU32 bg = hot ? hover_col : highlight_col;
                draw->AddRectFilled(cell_min, cell_max, bg);
                draw->AddRectFilled(ImVec2(ax, at.y), ImVec2(ax + char_w, at.y + line_h), bg);
            }
            const uint8_t b = bytes[i];
            std::snprintf(buf, sizeof buf, "%02X", b);
            draw->AddText(ImVec2(x, at.y), b == 0 ? dim_col : text_col, buf);
            const char ascii[2] = {b >= 0x20 && b < 0x7F ? static_cast<char>(b) : '.', 0};
            draw->AddText(ImVec2(ax, at.y), b >= 0x20 && b < 0x7F ? text_col : dim_col, ascii);
        }
    }
    ImGui::EndChild();
    ImGui::PopFont();
    if (hovered_index) {
        hovered = first + *hovered_index;
        byte_tooltip(*hovered, bytes.data() + *hovered_index, bytes.size() - *hovered_index);
    }
    ImGui::PopID();
    return hovered;
}

}  // namespace mlens
