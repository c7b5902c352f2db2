// Whole-string digit tests for the parsers of names the tree writes itself (blob file names and
// digests, temporary names, layer and expert indices) and for hex escapes in text.
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

// True when every character of `s` is one of 0-9a-f (an empty `s` too; callers check the length).
// Free of a branch per character: the digits of a digest are random, so such a branch would be
// mispredicted about every other character.
constexpr bool all_lower_hex_digits(std::string_view s) {
    bool all = true;
    for (char c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        all &= (static_cast<unsigned char>(u - '0') < 10) | (static_cast<unsigned char>(u - 'a') < 6);
    }
    return all;
}

// The value of one hex digit (either case), -1 for any other character.
constexpr int hex_digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace mlens
