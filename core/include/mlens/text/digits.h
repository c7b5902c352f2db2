// Whole-string digit tests for the parsers of names the tree writes itself (blob file names,
// temporary names, layer and expert indices).
#pragma once

#include <string_view>

namespace mlens {

// True when `s` is not empty and every character is an ASCII decimal digit.
constexpr bool all_decimal_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace mlens
