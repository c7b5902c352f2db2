#include "mlens/text/escape.h"
#include "mlens/text/readable_text.h"

#include <cstdio>

namespace mlens {

namespace {

// Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not valid there.
size_t utf8_sequence_length(const uint8_t* p, size_t n, uint32_t& cp) {
    uint8_t b0 = p[0];
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    size_t len;
    uint32_t min;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
        min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
        min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
        min = 0x10000;
    } else
        return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; ++i) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

bool is_bidi_control(uint32_t cp) {
    return cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C;
}

}  // namespace

// A table-driven validator (Unicode Table 3-7, well-formed byte sequences) with no data-dependent
// branches. The 9-state automaton is packed into one 64-bit row per byte value: state s (stored
// as s*6) moves to (row[byte] >> state) & 63, so the loop's dependency chain is one shift.
namespace {

enum : uint8_t { kAccept = 0, kReject = 8 };

constexpr uint8_t byte_class(unsigned b) {
    return b < 0x80 ? 0
        : b < 0x90  ? 1
        : b < 0xA0  ? 2
        : b < 0xC0  ? 3
        : b < 0xC2  ? 4
        : b < 0xE0  ? 5
        : b == 0xE0 ? 6
        : b == 0xED ? 8
        : b < 0xF0  ? 7
        : b == 0xF0 ? 9
        : b < 0xF4  ? 10
        : b == 0xF4 ? 11
                    : 4;
}

struct Utf8Tables {
    uint8_t next[9][12];
    uint64_t rows[256];
    constexpr Utf8Tables() : next{}, rows{} {
        for (auto& row : next)
            for (auto& cell : row) cell = kReject;
        // state 0: start of a character
        next[0][0] = 0;
        next[0][5] = 1;
        next[0][6] = 3;
        next[0][7] = 2;
        next[0][8] = 4;
        next[0][9] = 5;
        next[0][10] = 6;
        next[0][11] = 7;
        for (int c = 1; c <= 3; ++c) {
            next[1][c] = 0;  // one continuation byte left
            next[2][c] = 1;  // two left
            next[6][c] = 2;  // three left (after F1-F3)
        }
        next[3][3] = 1;  // after E0: A0-BF
        next[4][1] = next[4][2] = 1;  // after ED: 80-9F
        next[5][2] = next[5][3] = 2;  // after F0: 90-BF
        next[7][1] = 2;  // after F4: 80-8F
        for (unsigned b = 0; b < 256; ++b)
            for (unsigned state = 0; state < 9; ++state) rows[b] |= static_cast<uint64_t>(next[state][byte_class(b)] * 6) << (state * 6);
    }
};

constexpr Utf8Tables kUtf8;

}  // namespace

bool utf8_valid(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i + 8 <= size) {  // leading ASCII, 8 bytes at a time
        uint64_t w;
        __builtin_memcpy(&w, data + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
    }
    uint64_t state = kAccept;
    for (; i < size; ++i) state = (kUtf8.rows[data[i]] >> state) & 63;
    return state == kAccept;
}

bool utf8_valid(std::string_view s) { return utf8_valid(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

namespace {

// escape_for_display and readable_text: the same escaping, line breaks and tabs kept or not.
std::string escape_text(std::string_view s, size_t max_chars, bool keep_lines) {
    std::string out;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    size_t i = 0, chars = 0;
    char buf[16];
    while (i < s.size()) {
        if (chars == max_chars) {
            out += "…";
            break;
        }
        uint32_t cp;
        size_t len = utf8_sequence_length(p + i, s.size() - i, cp);
        if (keep_lines && len == 1 && (cp == '\n' || cp == '\t' || cp == '\r')) {
            // CR LF and a lone CR end a line as LF does.
            if (cp == '\r' && i + 1 < s.size() && p[i + 1] == '\n') ++i;
            out += cp == '\t' ? '\t' : '\n';
            ++i;
        } else if (len == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
            // Invalid byte or control character: escape each byte of it.
            size_t n = len == 0 ? 1 : len;
            for (size_t k = 0; k < n; ++k) {
                std::snprintf(buf, sizeof buf, "\\x%02X", p[i + k]);
                out += buf;
            }
            i += n;
        } else if (is_bidi_control(cp)) {
            std::snprintf(buf, sizeof buf, "\\u{%04X}", cp);
            out += buf;
            i += len;
        } else {
            out.append(s.data() + i, len);
            i += len;
        }
        ++chars;
    }
    return out;
}

}  // namespace

std::string escape_for_display(std::string_view s, size_t max_chars) { return escape_text(s, max_chars, false); }

std::string readable_text(std::string_view text, size_t max_chars) { return escape_text(text, max_chars, true); }

std::string hex_bytes(std::string_view s) {
    std::string out;
    char buf[4];
    for (size_t i = 0; i < s.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%02X", static_cast<uint8_t>(s[i]));
        if (i) out += ' ';
        out += buf;
    }
    return out;
}

}  // namespace mlens
