// Small ImGui helpers shared by the panels: text from std::string_view, coloured and dim text,
// copy menus, search boxes, token pieces, pane splitters, number formatting.
//
// Contract: text passed to these helpers must already be safe for display (escaped or produced by
// display_text.h); the helpers never interpret it as a format string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <imgui.h>

#include "mlens/result.h"

#include "state/display_text.h"

namespace mlens::ui {

void text(std::string_view s);
void text_colored(const ImVec4& color, std::string_view s);
void text_dim(std::string_view s);
// A label in the dim colour followed by a value on the same line.
void label_value(std::string_view label, std::string_view value);

// Opens a context menu on right-click of the last item, with one "Copy <label>" entry per item.
void copy_menu(const char* popup_id, const std::vector<std::pair<std::string, std::string>>& items);

// A text box with a hint and a clear button; `focus` gives it keyboard focus this frame.
// Returns true when the text changed.
bool search_box(const char* id, const char* hint, std::string& text, float width, bool focus = false);

// A token piece, coloured by segment kind, on the current line.
void piece(const std::vector<PieceSegment>& segments);

// The segments with every character `font` has no glyph for split out as a \u{XXXX} escape
// segment (instead of the font's fallback box), so it stays identifiable.
std::vector<PieceSegment> with_missing_glyphs(ImFont* font, std::vector<PieceSegment> segments);

// A tooltip with a piece's raw bytes in hex, its code points (the first few) and, for characters
// the current font has no glyph for, which script lacks a font and which package supplies one.
// With PieceEncoding::byte_level and a piece that decodes, it first shows the piece as stored and
// the bytes of the text it stands for.
void piece_tooltip(std::string_view raw, PieceEncoding encoding = PieceEncoding::plain);
// missing_glyph_hint (script_fonts.h) of each script in `raw` the current font cannot draw, once each.
std::vector<std::string> missing_glyph_hints(std::string_view raw);

// A vertical drag handle between panes; `size` is the pane width it adjusts (positive `sign`
// grows it when dragged right, negative when dragged left). Returns true while dragging.
bool splitter(const char* id, float& size, float sign, float min_size, float max_size, float height);
// A horizontal drag handle under a pane of height `size` (dragging down grows it), as wide as the
// region. Returns true while dragging.
bool row_splitter(const char* id, float& size, float min_size, float max_size);

// "E_CODE: message" of a job's error (escaped, at most `max_chars` of message), in the warning
// colour for E_CANCELLED (the user asked for it) and the error colour otherwise.
void job_error_text(const Error& e, size_t max_chars = 1000);

// "2,359,296"
std::string with_separators(uint64_t n);
// One number through a printf format ("%.3f", "%.2f%%"); at most 63 characters.
std::string number_format(const char* format, double v);
// "0x0A3F2000" with at least 8 hex digits.
std::string hex_offset(uint64_t n);
// "0x1A40 – 0x1A80 (64 bytes)"
std::string byte_range_text(uint64_t offset, uint64_t length);

// True when the user pressed Ctrl + `key` (a GLFW key code; for letters the ASCII capital).
bool ctrl_pressed(int key);

}  // namespace mlens::ui
