// Text fitted to a number of terminal columns (display_width.h): table cells cut so that names
// keep the part that tells them apart, and long lines broken between words.
//
// Contract:
//  - elide_middle(text, width) returns `text` when it fits in `width` columns; otherwise its first
//    code points, "…", and its last code points, together at most `width` columns wide, the end
//    getting two thirds of the room ("model.layers.…experts.3.down_proj.weight": the tail of a
//    tensor name is what distinguishes it). width 1 gives "…", width 0 "". Cuts fall between code
//    points, so a wide character is never split.
//  - wrap_words(line, width) returns `line` alone when it fits; otherwise the line broken at
//    spaces into pieces of at most `width` columns. Every piece after the first starts with the
//    line's own leading spaces plus two more (a hanging indent: the continuation reads as part of
//    the item above). A word wider than the room left stays whole on a piece of its own, the one
//    case where a piece is wider than `width`. Runs of spaces at a break are dropped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

std::string elide_middle(std::string_view text, size_t width);
std::vector<std::string> wrap_words(std::string_view line, size_t width);

}  // namespace mlens
