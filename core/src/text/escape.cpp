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
