#include "widgets/token_chips.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "state/display_text.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr float kPadX = 4.0f, kPadY = 2.0f, kGap = 4.0f;

ImU32 segment_color(PieceSegmentKind kind) {
    const Palette& p = palette();
    switch (kind) {
        case PieceSegmentKind::text:
            return ImGui::GetColorU32(ImGuiCol_Text);
        case PieceSegmentKind::space:
        case PieceSegmentKind::marker:
            return ImGui::ColorConvertFloat4ToU32(p.marker);
        case PieceSegmentKind::escape:
            return ImGui::ColorConvertFloat4ToU32(p.escape);
        case PieceSegmentKind::byte_token:
            return ImGui::ColorConvertFloat4ToU32(p.byte_token);
    }
    return ImGui::GetColorU32(ImGuiCol_Text);
}

float text_width(ImFont* font, float size, std::string_view s) {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
}

}  // namespace

std::optional<size_t> token_chips(const char* id, const std::vector<TokenChip>& chips, ImFont* caption_font) {
    ImGui::PushID(id);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    ImFont* cap_font = caption_font ? caption_font : font;
    const float cap_size = caption_font ? caption_font->FontSize : size;
    const float height = size + cap_size + 2 * kPadY + 1.0f;
    const float left = ImGui::GetCursorScreenPos().x;
    const float right = left + std::max(60.0f, ImGui::GetContentRegionAvail().x);
    const ImU32 dim = ImGui::ColorConvertFloat4ToU32(palette().dim);
    ImVec2 pos = ImGui::GetCursorScreenPos();
    std::optional<size_t> hovered;

    for (size_t i = 0; i < chips.size(); ++i) {
        const TokenChip& chip = chips[i];
        std::vector<PieceSegment> segments = ui::with_missing_glyphs(font, visible_piece(chip.piece, kChipPieceChars));
        float piece_w = 0;
        for (const PieceSegment& s : segments) piece_w += text_width(font, size, s.text);
        if (segments.empty()) piece_w = text_width(font, size, "(empty)");
        float width = std::max(piece_w, text_width(cap_font, cap_size, chip.caption)) + 2 * kPadX;
        if (i > 0 && pos.x + width > right) {
            pos.x = left;
            pos.y += height + kGap;
        }
        ImGui::SetCursorScreenPos(pos);
        ImGui::Dummy(ImVec2(width, height));
        ImVec2 max(pos.x + width, pos.y + height);
        bool hover = ImGui::IsItemHovered();
        if (ImGui::IsRectVisible(pos, max)) {
            dl->AddRectFilled(pos, max, chip.fill ? chip.fill : ImGui::GetColorU32(ImGuiCol_FrameBg), 3.0f);
            ImU32 border = hover ? ImGui::GetColorU32(ImGuiCol_ButtonHovered)
                : chip.border    ? chip.border
                                 : ImGui::GetColorU32(ImGuiCol_Border);
            dl->AddRect(pos, max, border, 3.0f, 0, chip.border || hover ? 1.5f : 1.0f);
            float x = pos.x + kPadX;
            const float y = pos.y + kPadY;
            if (segments.empty()) dl->AddText(font, size, ImVec2(x, y), dim, "(empty)");
            for (const PieceSegment& s : segments) {
                dl->AddText(font, size, ImVec2(x, y), segment_color(s.kind), s.text.data(), s.text.data() + s.text.size());
                x += text_width(font, size, s.text);
            }
            dl->AddText(cap_font, cap_size, ImVec2(pos.x + kPadX, y + size + 1.0f), dim, chip.caption.data(),
                        chip.caption.data() + chip.caption.size());
        }
        if (hover) {
            hovered = i;
            ImGui::BeginTooltip();
            ui::text(chip.caption);
            if (!chip.tooltip.empty()) ui::text(chip.tooltip);
            ui::piece(visible_piece(chip.piece, 200));
            ImGui::EndTooltip();
            ui::piece_tooltip(chip.piece);
        }
        pos.x += width + kGap;
    }
    if (chips.empty()) ImGui::Dummy(ImVec2(0, 0));
    ImGui::PopID();
    return hovered;
}

std::optional<size_t> token_chip_box(const char* id, const std::vector<TokenChip>& chips, ImFont* caption_font, float max_height) {
    ImGuiStorage* storage = ImGui::GetStateStorage();
    const ImGuiID key = ImGui::GetID(id);
    const ImGuiStyle& style = ImGui::GetStyle();
    float content = storage->GetFloat(key, ImGui::GetFrameHeightWithSpacing() * 2);
    float height = std::min(content + 2 * style.WindowPadding.y, std::max(max_height, ImGui::GetFrameHeight() * 2));
    ImGui::BeginChild(id, ImVec2(0, height), true);
    std::optional<size_t> hovered = token_chips(id, chips, caption_font);
    float used = ImGui::GetCursorPosY() - style.WindowPadding.y - style.ItemSpacing.y;
    ImGui::EndChild();
    storage->SetFloat(key, std::max(used, 1.0f));
    return hovered;
}

}  // namespace mlens
