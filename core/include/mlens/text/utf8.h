// UTF-8, decoded and encoded in one place: every reader of text (escaping, column widths, JSON
// checks, font drawing) decodes with utf8_decode, and every writer of a code point encodes with
// append_utf8.
//
// Contract:
//  - utf8_decode decodes the strict sequence at the start of `s` (no overlongs, surrogates or
//    code points above U+10FFFF), returning its length, 1 to 4, and the code point in `cp`; 0
//    when `s` is empty or starts with no such sequence (`cp` is then left as it was).
//  - utf8_valid checks that the whole text is strict UTF-8, as utf8_decode reads it, with a
//    table-driven automaton fast on long texts.
//  - utf8_first_invalid is the byte offset of the first sequence utf8_decode does not accept,
//    or the text's size when there is none (ASCII runs are skipped 8 bytes at a time).
//  - append_utf8 appends the UTF-8 form of a code point below U+110000 (a surrogate is encoded
//    as its three bytes: the caller decides whether it may appear).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlens {

size_t utf8_decode(std::string_view s, uint32_t& cp);
bool utf8_valid(std::string_view s);
bool utf8_valid(const uint8_t* data, size_t size);
size_t utf8_first_invalid(std::string_view s);
void append_utf8(std::string& out, uint32_t cp);

}  // namespace mlens
