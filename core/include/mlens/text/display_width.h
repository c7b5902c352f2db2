// How many terminal columns text takes, for tables that pad cells to line up (the CLI's
// print_table, and anything else that aligns text in a monospace grid).
//
// Contract: code_point_width gives 2 for East Asian Wide and Fullwidth characters (CJK
// ideographs, kana, Hangul syllables, fullwidth forms, wide emoji), 0 for characters that draw
// on the previous one or not at all (combining marks Mn/Me, format characters Cf except the soft
// hyphen, Hangul medial vowels and final consonants U+1160-U+11FF) and for C0/C1 controls, and 1
// for everything else. The tables follow Unicode 14 (EastAsianWidth.txt, UnicodeData.txt);
// unassigned code points inside a wide block count as wide, as the Unicode default says.
// display_width sums code_point_width over the UTF-8 text; a byte that does not start a valid
// sequence counts one column (callers normally pass escape_for_display output, which has none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mlens {

int code_point_width(uint32_t cp);
size_t display_width(std::string_view utf8);

}  // namespace mlens
