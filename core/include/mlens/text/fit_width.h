// Text fitted to a number of terminal columns (display_width.h) without losing any of it: long
// lines broken between words, and table cells broken into lines inside their column.
//
// Contract:
//  - wrap_words(line, width) returns `line` alone when it fits; otherwise the line broken at
//    spaces into pieces of at most `width` columns, the spaces between the words of a piece kept
//    as the line has them (aligned columns stay aligned) and the run of spaces at a break dropped.
//    Every piece after the first starts with a hanging indent: where the line is a term and its
//    description apart by two or more spaces ("  info      Format, ...", as --help lists
//    commands) and the description starts within the first half of `width`, at the
//    description's column; where the line is indented by more than eight columns (it continues
//    an item above it, as a description under its option does), at its indent; else the line's
//    own leading spaces plus two (the continuation reads as part of the item above). A number and
//    the unit after it ("2.36 MB)", "30.1 kB", "4 GiB": the units of number_format.h, bytes, s and
//    ms) are never parted. A word (or a number and its unit) wider than the room left stays whole
//    on a piece of its own, the one case where a piece is wider than `width`.
//  - break_cell(text, width) returns `text` alone when it fits in `width` columns (or width is 0);
//    otherwise pieces of at most `width` columns that together hold every character of `text` in
//    order. A piece ends, by preference, at a space (dropped there), else right after one of
//    . _ / - : , = (names break where their parts meet: "blk.12.ffn_down." "weight"), else at the
//    last code point that fits; a wide character is never split, and one wider than `width`
//    takes a piece of its own. Leading spaces narrower than half the width indent every piece.
//  - wrap_command(line, width) breaks a shell command line (words separated by spaces, a word in
//    single quotes kept whole) so it can still be pasted: `line` alone when it fits; otherwise
//    lines that end in " \\" (a line continuation) but the last, each after the first starting
//    with the line's own leading spaces plus four. An option ("--name") stays on one line with the
//    value after it (a word not starting with '-'). A line wider than `width` happens only when
//    one option and its value are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

std::vector<std::string> wrap_words(std::string_view line, size_t width);
std::vector<std::string> break_cell(std::string_view text, size_t width);
std::vector<std::string> wrap_command(std::string_view line, size_t width);

}  // namespace mlens
