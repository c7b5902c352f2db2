// Text in table cells that never cuts a word without saying so: a text wider than its cell is
// elided at a word boundary with "…", hovering shows the whole text, and copying (Ctrl+C while
// hovering, or right-click → Copy) takes the whole text. Also: fixed column widths fitted to content.
//
// Contract:
//  - elide_length() is the pure rule: the whole text when it fits in `max_width`; otherwise the
//    longest prefix that fits with "…" after it and ends at a word boundary — after a space or one
//    of . _ - / : , ; = ( [ | or before a space (trailing spaces dropped) — or, when not even the
//    first word fits, the longest prefix of whole UTF-8 characters that does (possibly 0).
//    `measure` gives the width of one character; widths add up (ImGui fonts have no kerning).
//  - elide_start() is the rule for names (keys, tensors) whose end says the most: the first byte
//    of the longest suffix that starts after a word boundary and fits beside "…", shown as
//    "…" + text[tail, end) ("…experts.3.down_proj.weight"): 0 when the text fits, text.size()
//    when no such suffix fits (elided_text then cuts at the end as elide_length does).
//  - cell_text() and cell_selectable() draw in the current cell (or any region: they use the
//    remaining width on the line). Text must already be safe for display (escaped).
//  - wrap_lines() is the rule for a long value wrapped in its column: greedy lines that end
//    before a space (the spaces between two lines dropped), so a number such as "1,173,248" or
//    "0.0011" is never split; only a word wider than the whole line is cut, after the last
//    boundary character that fits (as elide_length), else between whole UTF-8 characters.
//    wrapped_text() draws the lines in the width left on the current line.
//  - cell_piece() is cell_text() for token pieces: hover and copy take the visible text.
//  - fitted_width() is the width of the widest text plus the cell padding, at least the header's
//    and at most `max_width`: for ImGuiTableColumnFlags_WidthFixed columns, one column per table
//    taking the rest as WidthStretch.
//  - clipped_rows() draws a table listing `indices` one row each, only the rows in view
//    (ImGuiListClipper): for each it starts the row, pushes the row's position as ID and calls
//    draw(index), which fills the row's cells.
//  - table_columns() sets up the columns in order and draws the header row.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace mlens::ui {

size_t elide_length(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure);

size_t elide_start(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure);

enum class Elide { end, start };

// The text drawn for `text` in `max_width` with the current font: itself or a prefix and "…".
std::string elided_text(std::string_view text, float max_width, Elide where = Elide::end);

std::vector<std::string_view> wrap_lines(std::string_view text, float max_width, const std::function<float(std::string_view)>& measure);
void wrapped_text(std::string_view text);

void cell_text(std::string_view text, Elide where = Elide::end);
void cell_text_colored(const ImVec4& color, std::string_view text);
void cell_text_dim(std::string_view text);
// A Selectable whose label is `text` elided to the cell; `flags` as ImGui::Selectable's. IDs come
// from the caller's ID stack (push a row ID first). Returns true when clicked.
bool cell_selectable(std::string_view text, bool selected, ImGuiSelectableFlags flags, Elide where = Elide::end);
// A token piece (raw bytes from the file) in the current cell: coloured by segment as ui::piece
// draws it when its visible text (visible_piece_text, at most `max_chars`) fits; otherwise that
// text elided like cell_text, the whole on hover and copy. Returns true when elided.
bool cell_piece(std::string_view raw, size_t max_chars = 120);

float fitted_width(const std::vector<std::string>& texts, const char* header, float max_width);
float fitted_width(std::string_view widest, const char* header, float max_width);

template <typename Draw>
void clipped_rows(const std::vector<size_t>& indices, Draw draw) {
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(indices.size()));
    while (clipper.Step())
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            ImGui::TableNextRow();
            ImGui::PushID(r);
            draw(indices[static_cast<size_t>(r)]);
            ImGui::PopID();
        }
}

struct TableColumn {
    const char* name;
    ImGuiTableColumnFlags flags = 0;
    float width = 0.0f;  // a fixed column's width, a stretched one's weight (0: ImGui's default)
};
void table_columns(std::initializer_list<TableColumn> columns);

}  // namespace mlens::ui
