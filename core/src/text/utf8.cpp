#include "mlens/text/utf8.h"

#include <cstring>

namespace mlens {

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

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | cp >> 6);
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | cp >> 12);
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | cp >> 18);
        out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
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
        std::memcpy(&w, data + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
    }
    uint64_t state = kAccept;
    for (; i < size; ++i) state = (kUtf8.rows[data[i]] >> state) & 63;
    return state == kAccept;
}

bool utf8_valid(std::string_view s) { return utf8_valid(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

}  // namespace mlens
