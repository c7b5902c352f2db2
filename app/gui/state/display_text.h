// How text from files is shown: token pieces with every invisible or ambiguous character made
// visible, and long multi-line strings (templates) kept multi-line but otherwise escaped.
//
// Contract for pieces (bytes from the file, possibly invalid UTF-8):
//  - A piece that is exactly "<0xNN>" is one `byte_token` segment.
//  - ' ' becomes '·' (a `space` segment); U+2581 '▁' (SentencePiece space) and U+0120 'Ġ' /
//    U+010A 'Ċ' (byte-level BPE space and newline) are kept as they are, as `marker` segments.
//  - C0 controls and DEL become escapes: \n \t \r, others \xNN (`escape` segments).
//  - Every other character goes through escape_for_display: kept characters are `text`
//    segments; invalid bytes, C1 controls and invisible format characters come back escaped (\xNN, \uNNNN)
//    and are `escape` segments.
//  - At most max_chars characters are shown (an escape counts as its length); a cut piece ends
//    with "…".
//  - With PieceEncoding::byte_level (byte_level_bpe.h) a piece that decodes is shown as the text
//    it stands for, by the rules above ("Ġthe" as "·the", "Ċ" as "\n", "æ³ķæ²»" as "法治", a
//    character split over two tokens as its \xNN bytes); the decoded text has no markers, so a
//    'Ġ' in it is a plain character. A piece that does not decode is shown as stored.
// visible_piece_text() is the same rendering as one string (search, copy, tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/text/byte_level_bpe.h"
#include "mlens/text/escape.h"  // utf8_decode

namespace mlens {

enum class PieceSegmentKind { text, space, marker, escape, byte_token };

struct PieceSegment {
    PieceSegmentKind kind = PieceSegmentKind::text;
    std::string text;
};

std::vector<PieceSegment> visible_piece(std::string_view piece, size_t max_chars = 120, PieceEncoding encoding = PieceEncoding::plain);
std::string visible_piece_text(std::string_view piece, size_t max_chars = 120, PieceEncoding encoding = PieceEncoding::plain);

// A multi-line string for a read-only text view: lines are kept ("\r\n" and "\n" end a line),
// tabs become four spaces, and each line goes through escape_for_display. At most max_bytes of
// the input are used; a cut text ends with a line "… (N more bytes)".
std::string escape_multiline(std::string_view s, size_t max_bytes = 1u << 20);

// The first `max_points` code points of `s` as "U+0041 U+65E5 " (a byte that starts no valid
// sequence as "\xNN "), each followed by a space.
std::string code_points_text(std::string_view s, size_t max_points);

// True if `piece` is a byte token "<0xNN>" (upper- or lower-case hex).
bool is_byte_token(std::string_view piece);

}  // namespace mlens
