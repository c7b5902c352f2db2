#include "gguf_string_scan.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "mlens/text/utf8.h"

namespace mlens {

namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ull;

// The loop's only dependency chain is position -> length -> next position; everything else
// (the offset, the check) runs beside it, in locals, so an element costs a few cycles. The loop
// is made once per rule of the key's check and once without one, and a short element's check keeps
// its first failure in a register without a branch.
template <typename Length, bool Swap, bool Checked, StringArrayCheck::Rule Rule>
ScannedStrings scan(const BufferedStrings& buffer, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                    StringArrayCheck* check) {
    const uint8_t* const begin = buffer.data;
    const uint32_t first_offset = static_cast<uint32_t>(buffer.at - buffer.origin);
    const uint8_t* const end = begin + buffer.size;
    // Where the elements that may be scanned start: their length field lies in the buffer, and
    // they start before the limit.
    const uint64_t fields_fit = buffer.size >= sizeof(Length) ? buffer.size - sizeof(Length) + 1 : 0;
    const uint64_t before_limit = buffer.starts_before > buffer.at ? buffer.starts_before - buffer.at : 0;
    const uint8_t* const starts_end = begin + std::min(fields_fit, before_limit);
    const uint8_t* p = begin;
    uint64_t n = 0, lengths_or = 0, first_failed = UINT64_MAX;
    for (; n < max_count && p < starts_end; ++n) {
        Length raw;
        std::memcpy(&raw, p, sizeof(Length));
        uint64_t length = raw;
        if constexpr (Swap) length = sizeof(Length) == 8 ? __builtin_bswap64(raw) : __builtin_bswap32(static_cast<uint32_t>(raw));
        const uint8_t* const text = p + sizeof(Length);
        if (length > max_length || length > static_cast<uint64_t>(end - text)) break;
        out[n] = first_offset + static_cast<uint32_t>(p - begin);
        lengths_or |= length;
        if constexpr (Checked) {
            if (length <= StringArrayCheck::kReadableBytes && static_cast<uint64_t>(end - text) >= StringArrayCheck::kReadableBytes) {
                const bool passes = StringArrayCheck::passes_short_as<Rule>(text, length);
                first_failed = passes ? first_failed : std::min(first_failed, n);
            } else {
                check->visit(first_index + n,
                             std::string_view(reinterpret_cast<const char*>(text), std::min(length, StringArrayCheck::kMaxVisitBytes)));
            }
        }
        p = text + length;
    }
    if (Checked && first_failed != UINT64_MAX) check->note_failure(first_index + first_failed);
    return {n, static_cast<uint64_t>(p - begin), lengths_or};
}

template <typename Length, bool Swap>
ScannedStrings scan_checked(const BufferedStrings& buffer, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                            StringArrayCheck* check) {
    using Rule = StringArrayCheck::Rule;
    if (!check) return scan<Length, Swap, false, Rule::merge_has_space>(buffer, max_length, max_count, first_index, out, check);
    if (check->rule() == Rule::merge_has_space)
        return scan<Length, Swap, true, Rule::merge_has_space>(buffer, max_length, max_count, first_index, out, check);
    return scan<Length, Swap, true, Rule::byte_token_form>(buffer, max_length, max_count, first_index, out, check);
}

// Element i of the scanned ones: where its length field and its text start, and its length.
struct FoundStrings {
    const BufferedStrings& buffer;
    const uint32_t* offsets;
    const ScannedStrings& scanned;
    const uint32_t first_offset = static_cast<uint32_t>(buffer.at - buffer.origin);

    // (The buffer is far shorter than 4 GiB, so the distance in 32 bits is exact.)
    const uint8_t* start(uint64_t i) const {
        return buffer.data + (i < scanned.count ? static_cast<uint32_t>(offsets[i] - first_offset) : scanned.bytes);
    }
    const uint8_t* text(uint64_t i) const { return start(i) + buffer.length_bytes; }
    uint64_t length(uint64_t i) const { return static_cast<uint64_t>(start(i + 1) - text(i)); }

    // The first element of [first, end) that is not UTF-8, when the length fields between them
    // have no byte >= 0x80.
    std::optional<uint64_t> first_invalid_in_run(uint64_t first, uint64_t end) const {
        if (first == end || utf8_valid(text(first), static_cast<size_t>(start(end) - text(first)))) return std::nullopt;
        for (uint64_t i = first; i < end; ++i)
            if (!utf8_valid(text(i), length(i))) return i;
        return std::nullopt;
    }
};

}  // namespace

ScannedStrings scan_strings(const BufferedStrings& buffer, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                            StringArrayCheck* check) {
    if (buffer.length_bytes == 4)
        return buffer.swap_bytes ? scan_checked<uint32_t, true>(buffer, max_length, max_count, first_index, out, check)
                                 : scan_checked<uint32_t, false>(buffer, max_length, max_count, first_index, out, check);
    return buffer.swap_bytes ? scan_checked<uint64_t, true>(buffer, max_length, max_count, first_index, out, check)
                             : scan_checked<uint64_t, false>(buffer, max_length, max_count, first_index, out, check);
}

// A run of elements whose length fields between them have no byte >= 0x80 is valid UTF-8 from
// its first text to its last exactly when each text is: those bytes are ASCII, and no sequence
// can span an ASCII byte. (A length field's bytes are its length's bytes in some order.) So one
// vector pass checks a run, runs are cut at the other length fields, and only a failing run is
// checked element by element.
std::optional<uint64_t> first_invalid_utf8(const BufferedStrings& buffer, const uint32_t* offsets, const ScannedStrings& scanned) {
    const FoundStrings found{buffer, offsets, scanned};
    if ((scanned.lengths_or & kHighBits) == 0) return found.first_invalid_in_run(0, scanned.count);
    uint64_t run_first = 0;
    for (uint64_t i = 0; i < scanned.count; ++i) {
        if ((found.length(i) & kHighBits) == 0) continue;
        if (std::optional<uint64_t> bad = found.first_invalid_in_run(run_first, i)) return bad;
        run_first = i;
    }
    return found.first_invalid_in_run(run_first, scanned.count);
}

WindowScan scan_window(const BufferedStrings& window, uint64_t max_length, uint64_t max_count, uint64_t first_index, uint32_t* out,
                       StringArrayCheck* check, bool find_invalid_utf8) {
    WindowScan result;
    while (result.count < max_count && result.bytes < window.size) {
        BufferedStrings piece = window;
        piece.data += result.bytes;
        piece.at += result.bytes;
        piece.size = std::min(kScanPieceBytes, window.size - result.bytes);
        uint32_t* const slots = out + result.count;
        const uint64_t piece_max = max_count - result.count;
        ScannedStrings scanned = scan_strings(piece, max_length, piece_max, first_index + result.count, slots, check);
        if (scanned.count == 0 && piece.size < window.size - result.bytes) {
            piece.size = window.size - result.bytes;
            scanned = scan_strings(piece, max_length, piece_max, first_index + result.count, slots, check);
        }
        if (scanned.count == 0) break;
        if (find_invalid_utf8 && !result.first_invalid_utf8) {
            if (std::optional<uint64_t> bad = first_invalid_utf8(piece, slots, scanned)) result.first_invalid_utf8 = result.count + *bad;
        }
        result.count += scanned.count;
        result.bytes += scanned.bytes;
    }
    return result;
}

}  // namespace mlens
