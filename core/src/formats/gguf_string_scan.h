// The scan of a GGUF STRING array's elements held in one buffer (a piece of the reader's
// window), so that a 262k-token vocabulary opens in about one pass over its bytes: one tight
// loop over the length fields finds where each element starts and shows each element to its
// key's check; a vector pass over the texts finds the first element that is not valid UTF-8.
//
// Contract: only elements that start before the buffer's start limit, lie wholly in the buffer
// and whose length is within the limit are scanned; the caller reads any other element field by
// field (and reports what is wrong with it). Nothing is allocated; offsets are written where the caller says, as the low 32 bits of
// their distance from an origin (string_offsets.h).
#pragma once

#include <cstdint>
#include <optional>

#include "gguf_semantic_checks.h"

namespace mlens {

// A buffer holding the file's bytes [at, at + size).
struct BufferedStrings {
    const uint8_t* data;
    uint64_t at;
    uint64_t size;
    uint32_t length_bytes;  // 8, or 4 in GGUF v1
    bool swap_bytes;  // big-endian lengths
    uint64_t origin;  // offsets are written as the low 32 bits of (offset − origin); origin <= at
    uint64_t starts_before = UINT64_MAX;  // no element starting at or after this file offset is scanned
};

struct ScannedStrings {
    uint64_t count = 0;  // elements scanned
    uint64_t bytes = 0;  // that they span from the buffer's start
    uint64_t lengths_or = 0;  // every length OR-ed together
};

// Reads length fields from the buffer's start while fewer than max_count elements were read and
// the next element lies wholly in the buffer with a length of at most max_length. Writes each
// element's file offset (of its length field, from the origin) to out and shows it, as element
// first_index + i, to `check` (when there is one).
ScannedStrings scan_strings(const BufferedStrings& buffer, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                            StringArrayCheck* check);

// Of the elements scan_strings found at offsets, the position of the first whose text is not
// strict UTF-8 (utf8.h), or nullopt.
std::optional<uint64_t> first_invalid_utf8(const BufferedStrings& buffer, const uint32_t* offsets, const ScannedStrings& scanned);

// A window is scanned a piece of kScanPieceBytes at a time (a larger piece for a larger element),
// so that the checks read what the offset scan just brought into the nearest cache.
inline constexpr uint64_t kScanPieceBytes = 16 << 10;

struct WindowScan {
    uint64_t count = 0;  // elements scanned
    uint64_t bytes = 0;  // that they span from the window's start
    std::optional<uint64_t> first_invalid_utf8;  // of those elements, when asked for
};

// scan_strings over a whole window, piece by piece; with find_invalid_utf8, also the position of
// the first element that is not UTF-8.
WindowScan scan_window(const BufferedStrings& window, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                       StringArrayCheck* check, bool find_invalid_utf8);

}  // namespace mlens
