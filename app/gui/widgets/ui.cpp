#include "widgets/ui.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>

#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "script_fonts.h"
#include "theme.h"

namespace mlens::ui {

void text(std::string_view s) { ImGui::TextUnformatted(s.data(), s.data() + s.size()); }

void text_colored(const ImVec4& color, std::string_view s) {
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    text(s);
    ImGui::PopStyleColor();
}

void text_dim(std::string_view s) { text_colored(palette().dim, s); }

void label_value(std::string_view label, std::string_view value) {
    text_dim(label);
    ImGui::SameLine();
    text(value);
}

void copy_menu(const char* popup_id, const std::vector<std::pair<std::string, std::string>>& items) {
    if (!ImGui::BeginPopupContextItem(popup_id)) return;
    for (const auto& [label, value] : items)
        if (ImGui::MenuItem(("Copy " + label).c_str())) ImGui::SetClipboardText(value.c_str());
    ImGui::EndPopup();
}

bool search_box(const char* id, const char* hint, std::string& text, float width, bool focus) {
    ImGui::PushID(id);
    float clear_w = ImGui::GetFrameHeight();
    if (focus) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(std::max(60.0f, width - clear_w - ImGui::GetStyle().ItemInnerSpacing.x));
    bool changed = ImGui::InputTextWithHint("##text", hint, &text);
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::BeginDisabled(text.empty());
    if (ImGui::Button("\xE2\x9C\x95", ImVec2(clear_w, 0))) {  // ✕
        text.clear();
        changed = true;
    }
    ImGui::EndDisabled();
    ImGui::PopID();
    return changed;
}

std::vector<PieceSegment> with_missing_glyphs(ImFont* font, std::vector<PieceSegment> segments) {
    std::vector<PieceSegment> out;
    for (PieceSegment& seg : segments) {
        if (seg.kind != PieceSegmentKind::text) {
            out.push_back(std::move(seg));
            continue;
        }
        std::string_view s = seg.text;
        size_t run = 0, i = 0;
        while (i < s.size()) {
            uint32_t cp = 0;
            size_t len = utf8_decode(s.substr(i), cp);
            if (len == 0)
                len = 1;
            else if (cp >= 0x80 && (cp > 0xFFFF || !font->FindGlyphNoFallback(static_cast<ImWchar>(cp)))) {
                if (i > run) out.push_back({PieceSegmentKind::text, std::string(s.substr(run, i - run))});
                char buf[16];
                std::snprintf(buf, sizeof buf, "\\u{%04X}", cp);
                out.push_back({PieceSegmentKind::escape, buf});
                run = i + len;
            }
            i += len;
        }
        if (s.size() > run) out.push_back({PieceSegmentKind::text, std::string(s.substr(run))});
    }
    return out;
}

void piece(const std::vector<PieceSegment>& segments) {
    const Palette& pal = palette();
    bool first = true;
    for (const PieceSegment& seg : with_missing_glyphs(ImGui::GetFont(), segments)) {
        if (!first) ImGui::SameLine(0, 0);
        first = false;
        switch (seg.kind) {
            case PieceSegmentKind::text:
                text(seg.text);
                break;
            case PieceSegmentKind::space:
            case PieceSegmentKind::marker:
                text_colored(pal.marker, seg.text);
                break;
            case PieceSegmentKind::escape:
                text_colored(pal.escape, seg.text);
                break;
            case PieceSegmentKind::byte_token:
                text_colored(pal.byte_token, seg.text);
                break;
        }
    }
    if (segments.empty()) text_dim("(empty)");
}

std::vector<std::string> missing_glyph_hints(std::string_view raw) {
    ImFont* font = ImGui::GetFont();
    std::vector<std::string> hints;
    for (size_t i = 0; i < raw.size();) {
        uint32_t cp = 0;
        size_t len = utf8_decode(raw.substr(i), cp);
        if (len > 0 && cp >= 0x80 && (cp > 0xFFFF || !font->FindGlyphNoFallback(static_cast<ImWchar>(cp)))) {
            std::string hint = missing_glyph_hint(cp);
            if (std::find(hints.begin(), hints.end(), hint) == hints.end()) hints.push_back(std::move(hint));
        }
        i += len ? len : 1;
    }
    return hints;
}

void piece_tooltip(std::string_view raw, PieceEncoding encoding) {
    std::string bytes = hex_bytes(raw.substr(0, 64)) + (raw.size() > 64 ? " \xE2\x80\xA6" : "");
    const std::string points = code_points_text(raw, 16);
    std::vector<std::string> hints = missing_glyph_hints(raw);
    ImGui::BeginTooltip();
    if (std::optional<std::string> decoded = encoding == PieceEncoding::byte_level ? byte_level_decode(raw) : std::nullopt) {
        text_dim("stored (byte-level BPE)");
        piece(visible_piece(raw, 80));
        text_dim("text: " + std::to_string(decoded->size()) + (decoded->size() == 1 ? " byte" : " bytes"));
        text(hex_bytes(std::string_view(*decoded).substr(0, 64)) + (decoded->size() > 64 ? " \xE2\x80\xA6" : ""));
        text_dim("stored:");
    }
    text_dim(std::to_string(raw.size()) + (raw.size() == 1 ? " byte" : " bytes"));
    text(bytes);
    text(points);
    for (const std::string& hint : hints) text_colored(palette().warning, hint);
    ImGui::EndTooltip();
}

namespace {

ImU32 handle_color(bool active) {
    return ImGui::GetColorU32(active ? ImGuiCol_SeparatorActive : ImGui::IsItemHovered() ? ImGuiCol_SeparatorHovered : ImGuiCol_Separator);
}

}  // namespace

bool row_splitter(const char* id, float& size, float min_size, float max_size) {
    const float height = ImGui::GetStyle().ItemSpacing.y + 2;
    ImGui::InvisibleButton(id, ImVec2(std::max(ImGui::GetContentRegionAvail().x, 1.0f), height));
    bool active = ImGui::IsItemActive();
    if (ImGui::IsItemHovered() || active) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
    if (active) size = std::clamp(size + ImGui::GetIO().MouseDelta.y, min_size, std::max(min_size, max_size));
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float y = (a.y + b.y) * 0.5f;
    const ImU32 color = handle_color(active);
    ImGui::GetWindowDrawList()->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), color, active ? 2.0f : 1.0f);
    return active;
}

bool splitter(const char* id, float& size, float sign, float min_size, float max_size, float height) {
    float width = ImGui::GetStyle().ItemSpacing.x;
    ImGui::InvisibleButton(id, ImVec2(width, height));
    bool active = ImGui::IsItemActive();
    if (ImGui::IsItemHovered() || active) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    if (active) size = std::clamp(size + sign * ImGui::GetIO().MouseDelta.x, min_size, std::max(min_size, max_size));
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float x = (a.x + b.x) * 0.5f;
    const ImU32 color = handle_color(active);
    ImGui::GetWindowDrawList()->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), color, active ? 2.0f : 1.0f);
    return active;
}

std::string with_separators(uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

void job_error_text(const Error& e, size_t max_chars) {
    text_colored(e.code == ErrorCode::E_CANCELLED ? palette().warning : palette().error,
                 std::string(code_name(e.code)) + ": " + escape_for_display(e.message, max_chars));
}

std::string number_format(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string hex_offset(uint64_t n) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%08" PRIX64, n);
    return buf;
}

std::string byte_range_text(uint64_t offset, uint64_t length) {
    uint64_t end = offset + length < offset ? UINT64_MAX : offset + length;
    return hex_offset(offset) + " \xE2\x80\x93 " + hex_offset(end) + "  (" + with_separators(length) + (length == 1 ? " byte)" : " bytes)");
}

bool ctrl_pressed(int key) { return ImGui::GetIO().KeyCtrl && ImGui::IsKeyPressed(key, false); }

}  // namespace mlens::ui
