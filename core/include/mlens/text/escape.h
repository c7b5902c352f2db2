// Display safety for strings taken from files (malformed-inputs.md C7, A2.8).
//
// Contract: escape_for_display returns valid UTF-8 with no control characters (C0, DEL, C1),
// no bidi overrides/isolates/marks (U+200E/F, U+202A-U+202E, U+2066-U+2069) and no invalid
// sequences: control bytes and invalid bytes become \xNN, bidi code points \u{NNNN}; backslash
// itself is kept as is. The result holds at most max_chars code points of the input, followed
// by "…" when it was cut. utf8_valid checks strict UTF-8 (no overlongs, surrogates, > U+10FFFF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlens {

bool utf8_valid(std::string_view s);
bool utf8_valid(const uint8_t* data, size_t size);
std::string escape_for_display(std::string_view s, size_t max_chars = 200);
// Bytes as upper-case hex, e.g. "47 47 55 46".
std::string hex_bytes(std::string_view s);

}  // namespace mlens
