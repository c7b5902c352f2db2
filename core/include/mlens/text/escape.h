// Display safety for strings taken from files (malformed-inputs.md C7, A2.8).
//
// Contract:
//  - Invisible format characters (is_invisible_format) are one set for every output: bidi
//    embeddings, overrides, isolates and marks (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069),
//    zero-width spaces and joiners (U+200B-U+200D), line and paragraph separators (U+2028/9), the
//    soft hyphen U+00AD, the word joiner and invisible operators (U+2060-U+2064), the deprecated
//    format controls U+206A-U+206F, BOM U+FEFF, and the other default-ignorable format or filler
//    characters listed in escape.cpp. Each is written as its JSON escape, "\u202E" (a
//    supplementary one as its surrogate pair, "\uDB40\uDC01"): text and JSON output show them
//    the same way, and JSON readers get the same string back.
//  - escape_for_display returns valid UTF-8 with no control characters (C0, DEL, C1), no
//    invisible format characters and no invalid sequences: control bytes and invalid bytes become
//    \xNN, invisible format characters their escape; backslash itself is kept as is. The result
//    holds at most max_chars code points of the input, followed by "…" when it was cut.
//  - escape_invisible_in_json rewrites serialized JSON so that no invisible format character is
//    left raw (they can only occur inside strings, where the escape means the same character).
//  - Valid UTF-8 is utf8.h's strict UTF-8 (utf8_decode, utf8_valid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlens/text/utf8.h"

namespace mlens {

bool is_invisible_format(uint32_t cp);
// "\u202E", or the surrogate pair of a supplementary code point.
std::string invisible_escape(uint32_t cp);
std::string escape_for_display(std::string_view s, size_t max_chars = 200);
std::string escape_invisible_in_json(std::string_view json);
// Bytes as upper-case hex, e.g. "47 47 55 46".
std::string hex_bytes(std::string_view s);

}  // namespace mlens
