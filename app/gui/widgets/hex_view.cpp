#include "widgets/hex_view.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "theme.h"

namespace mlens {

namespace {


bool in_range(uint64_t offset, const ByteRange& r) {
    return r.length > 0 && offset >= r.offset && offset - r.offset < r.length;
}

}  // namespace

std::optional<uint64_t> hex_view(const char* id, const std::vector<uint8_t>& bytes, uint64_t base,
                                 ByteRange highlight, ImFont* mono) {
    std::optional<uint64_t> hovered;
    ImGui::PushID(id);
    ImGui::PushFont(mono);
    const float char_w = ImGui::CalcTextSize("0").x;
    const float line_h = ImGui::GetTextLineHeight();
    const int offset_digits = base + bytes.size() > 0xFFFFFFFFull ? 12 : 8;
    // 16 bytes per row when they fit, else 8, else 4 (a narrow inspector pane keeps its ASCII column).
    const auto row_chars = [&](size_t n) { return static_cast<float>(offset_digits + 2 + n * 3 + 2 + n) * char_w; };
    const float avail = ImGui::GetContentRegionAvail().x;
    const size_t per_row = avail >= row_chars(16) ? 16 : avail >= row_chars(8) ? 8 : 4;
    const size_t half = per_row / 2;
    // Column x positions in characters: offset, two spaces, n × "XX " with an extra space in the
    // middle, one space, then the ASCII column.
    const float hex_x = static_cast<float>(offset_digits + 2) * char_w;
    const float ascii_x = hex_x + static_cast<float>(per_row * 3 + 2) * char_w;
    const ImU32 highlight_col = ImGui::GetColorU32(palette().highlight_bg);
    const ImU32 hover_col = ImGui::GetColorU32(ImGuiCol_HeaderHovered);
    const ImU32 dim_col = ImGui::GetColorU32(palette().dim);
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 mouse = ImGui::GetIO().MousePos;

    size_t rows = (bytes.size() + per_row - 1) / per_row;
    for (size_t row = 0; row < rows; ++row) {
        ImVec2 origin = ImGui::GetCursorScreenPos();
        uint64_t row_offset = base + row * per_row;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%0*" PRIX64, offset_digits, row_offset);
        draw->AddText(origin, dim_col, buf);
        for (size_t col = 0; col < per_row; ++col) {
            size_t i = row * per_row + col;
            if (i >= bytes.size()) break;
            uint64_t offset = row_offset + col;
            float x = origin.x + hex_x + static_cast<float>(col * 3 + (col >= half ? 1 : 0)) * char_w;
            float ax = origin.x + ascii_x + static_cast<float>(col) * char_w;
            ImVec2 cell_min(x - char_w * 0.5f, origin.y), cell_max(x + char_w * 2.5f, origin.y + line_h);
            bool hot = ImGui::IsWindowHovered() && mouse.x >= cell_min.x && mouse.x < cell_max.x &&
                       mouse.y >= cell_min.y && mouse.y < cell_max.y;
            if (hot) hovered = offset;
            if (in_range(offset, highlight) || hot) {
                ImU32 bg = hot ? hover_col : highlight_col;
                draw->AddRectFilled(cell_min, cell_max, bg);
                draw->AddRectFilled(ImVec2(ax, origin.y), ImVec2(ax + char_w, origin.y + line_h), bg);
            }
            uint8_t b = bytes[i];
            std::snprintf(buf, sizeof buf, "%02X", b);
            draw->AddText(ImVec2(x, origin.y), b == 0 ? dim_col : text_col, buf);
            char ascii[2] = {b >= 0x20 && b < 0x7F ? static_cast<char>(b) : '.', 0};
            draw->AddText(ImVec2(ax, origin.y), b >= 0x20 && b < 0x7F ? text_col : dim_col, ascii);
        }
        ImGui::Dummy(ImVec2(ascii_x + static_cast<float>(per_row) * char_w, line_h));
    }
    if (hovered) {
        ImGui::PopFont();
        ImGui::BeginTooltip();
        size_t i = static_cast<size_t>(*hovered - base);
        uint8_t b = bytes[i];
        char head[64];
        std::snprintf(head, sizeof head, "offset 0x%" PRIX64 " (%" PRIu64 ")\nbyte %u", *hovered, *hovered, b);
        std::string tip = head;
        if (i + 4 <= bytes.size()) {
            uint32_t u32 = 0;
            for (int k = 3; k >= 0; --k) u32 = (u32 << 8) | bytes[i + static_cast<size_t>(k)];
            tip += "\nu32 LE " + std::to_string(u32);
        }
        if (i + 8 <= bytes.size()) {
            uint64_t u64 = 0;
            for (int k = 7; k >= 0; --k) u64 = (u64 << 8) | bytes[i + static_cast<size_t>(k)];
            tip += "\nu64 LE " + std::to_string(u64);
        }
        ImGui::TextUnformatted(tip.c_str());
        ImGui::EndTooltip();
        ImGui::PushFont(mono);
    }
    ImGui::PopFont();
    ImGui::PopID();
    return hovered;
}

}  // namespace mlens
