#include "mlens/text/escape.h"
#include "mlens/text/readable_text.h"

#include <cstdio>

namespace mlens {

namespace {

// Default-ignorable format and filler characters: drawn as nothing (or as a direction change),
// so a name or value holding one reads as something else.
constexpr struct {
    uint32_t first, last;
} kInvisibleRanges[] = {
    {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
    {0x180B, 0x180F}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F},
    {0x3164, 0x3164}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0}, {0xFFF9, 0xFFFB}, {0x1D173, 0x1D17A},
    {0xE0000, 0xE0FFF},
};

}  // namespace

size_t utf8_decode(std::string_view s, uint32_t& cp) {
    if (s.empty()) return 0;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    if (p[0] < 0x80) {
        cp = p[0];
        return 1;
    }
    const size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || len > s.size()) return 0;
    uint32_t v = p[0] & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
        if ((p[k] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    cp = v;
    return len;
}

bool is_invisible_format(uint32_t cp) {
    for (const auto& r : kInvisibleRanges)
        if (cp >= r.first && cp <= r.last) return true;
    return false;
}

std::string invisible_escape(uint32_t cp) {
    char buf[16];
    if (cp < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04X", cp);
    } else {
        const uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04X\\u%04X", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    }
    return buf;
}

std::string escape_invisible_in_json(std::string_view json) {
    std::string out;
    out.reserve(json.size());
    size_t i = 0;
    while (i < json.size()) {
        uint32_t cp = 0;
        const size_t len = static_cast<uint8_t>(json[i]) < 0x80 ? 1 : utf8_decode(json.substr(i), cp);
        if (len > 1 && is_invisible_format(cp)) {
            out += invisible_escape(cp);
            i += len;
        } else {
            const size_t n = len == 0 ? 1 : len;
            out.append(json.substr(i, n));
            i += n;
        }
    }
    return out;
}

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
        uint32_t cp = 0;
        const size_t len = utf8_decode(s.substr(i), cp);
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
        } else if (is_invisible_format(cp)) {
            out += invisible_escape(cp);
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
