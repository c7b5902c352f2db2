// The one layout of every text table the command line tool prints: columns fitted to a terminal
// width without losing a character of any cell.
//
// Contract of table_lines(rows, header_rows, columns):
//  - Columns are separated by two spaces and padded by display width (display_width.h); the last
//    cell of a line is not padded and no line ends in spaces. The first `header_rows` rows are
//    headings.
//  - A column whose every non-empty cell below the headings is a number (numeric_cell) is
//    right-aligned there and keeps its full width.
//  - When the table is wider than `columns`, the widest text columns give up one column at a
//    time, first down to their heading's width (at least kMinTextColumn). A table of headings and
//    more than two columns that still does not fit is printed as stanzas instead: per row below
//    the headings its first cell on a line, then for each other cell the last heading row's
//    heading (indented by two) and the value, as a two-column table. Any other table's text
//    columns then shrink down to kMinTextColumn. A cell wider than its column is broken into lines
//    inside it (break_cell, fit_width.h: at spaces, else where the parts of a name meet); the
//    other cells of that row leave those lines blank. A table whose numeric columns alone are
//    wider than `columns` stays wider.
//  - numeric_cell: optional sign, digits, point, exponent, digit separators, and one of the
//    suffixes tables give numbers ("%", "×", "x"); "-", "nan", "inf", "+inf", "-inf" too.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mlens {

constexpr size_t kMinTextColumn = 8;

bool numeric_cell(const std::string& cell);
std::vector<std::string> table_lines(const std::vector<std::vector<std::string>>& rows, size_t header_rows, size_t columns);

}  // namespace mlens
