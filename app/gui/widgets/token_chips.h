// Token chips: a run of tokens drawn as small boxes that wrap at the region's width — the piece
// with every invisible character made visible (display_text.h) on top, a caption (usually the
// id) below it in the caption font.
//
// Contract:
//  - Policy-free: the caller passes the chips each frame and gets back the hovered one.
//  - `piece` is raw bytes from the model; captions and tooltips must already be display-safe.
//  - Hovering a chip shows a tooltip with its caption, its tooltip lines and the piece's raw
//    bytes and code points.
//  - `border` 0 draws the theme's border; `fill` 0 the theme's frame background.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace mlens {

struct TokenChip {
    std::string_view piece;
    std::string caption;
    std::string tooltip;
    ImU32 border = 0;
    ImU32 fill = 0;
};

// Pieces longer than this many shown characters end with "…" in the chip (not in the tooltip).
constexpr size_t kChipPieceChars = 32;

std::optional<size_t> token_chips(const char* id, const std::vector<TokenChip>& chips, ImFont* caption_font);

// The chips in a bordered child window as tall as they need (measured on the previous frame) up
// to `max_height`, scrolling beyond it.
std::optional<size_t> token_chip_box(const char* id, const std::vector<TokenChip>& chips, ImFont* caption_font, float max_height);

}  // namespace mlens
