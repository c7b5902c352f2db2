#include "mlens/text/escape.h"

#include <cstdio>

namespace mlens {

namespace {

// Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not valid there.
size_t utf8_sequence_length(const uint8_t* p, size_t n, uint32_t& cp) {
    uint8_t b0 = p[0];
    if (b0 < 0x80) { cp = b0; return 1; }
    size_t len;
    uint32_t min;
    if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; ++i) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

bool is_bidi_control(uint32_t cp) {
    return cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C;
}

}  // namespace

bool utf8_valid(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
        // ASCII fast path, 8 bytes at a time.
        while (i + 8 <= size) {
            uint64_t w;
            __builtin_memcpy(&w, data + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= size) break;
        if (data[i] < 0x80) { ++i; continue; }
        uint32_t cp;
        size_t len = utf8_sequence_length(data + i, size - i, cp);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

bool utf8_valid(std::string_view s) {
    return utf8_valid(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string escape_for_display(std::string_view s, size_t max_chars) {
    std::string out;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    size_t i = 0, chars = 0;
    char buf[16];
    while (i < s.size()) {
        if (chars == max_chars) { out += "…"; break; }
        uint32_t cp;
        size_t len = utf8_sequence_length(p + i, s.size() - i, cp);
        if (len == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
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
