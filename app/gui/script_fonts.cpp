#include "script_fonts.h"

#include <cstdio>

namespace mlens {

namespace {

constexpr const char* kNotoCore = "fonts-noto-core";

constexpr CodePointRange kArabic[] = {{0x0600, 0x06FF}, {0x0750, 0x077F}, {0x08A0, 0x08FF}, {0xFB50, 0xFDFF}, {0xFE70, 0xFEFF}};
constexpr CodePointRange kGeorgian[] = {{0x10A0, 0x10FF}, {0x1C90, 0x1CBF}, {0x2D00, 0x2D2F}};
constexpr CodePointRange kLepcha[] = {{0x1C00, 0x1C4F}};
constexpr CodePointRange kOlChiki[] = {{0x1C50, 0x1C7F}};
constexpr CodePointRange kCoptic[] = {{0x2C80, 0x2CFF}};
constexpr CodePointRange kVai[] = {{0xA500, 0xA63F}};
// Technical symbols, arrows, shapes and dingbats DejaVu lacks.
constexpr CodePointRange kSymbols[] = {{0x2190, 0x21FF}, {0x2300, 0x23FF}, {0x2460, 0x24FF},
                                       {0x25A0, 0x27BF}, {0x2900, 0x297F}, {0x2B00, 0x2BFF}};
constexpr CodePointRange kSyriac[] = {{0x0700, 0x074F}, {0x0860, 0x086F}};
constexpr CodePointRange kThaana[] = {{0x0780, 0x07BF}};
constexpr CodePointRange kNko[] = {{0x07C0, 0x07FF}};
constexpr CodePointRange kDevanagari[] = {{0x0900, 0x097F}, {0xA8E0, 0xA8FF}};
constexpr CodePointRange kBengali[] = {{0x0980, 0x09FF}};
constexpr CodePointRange kGurmukhi[] = {{0x0A00, 0x0A7F}};
constexpr CodePointRange kGujarati[] = {{0x0A80, 0x0AFF}};
constexpr CodePointRange kOriya[] = {{0x0B00, 0x0B7F}};
constexpr CodePointRange kTamil[] = {{0x0B80, 0x0BFF}};
constexpr CodePointRange kTelugu[] = {{0x0C00, 0x0C7F}};
constexpr CodePointRange kKannada[] = {{0x0C80, 0x0CFF}};
constexpr CodePointRange kMalayalam[] = {{0x0D00, 0x0D7F}};
constexpr CodePointRange kSinhala[] = {{0x0D80, 0x0DFF}};
constexpr CodePointRange kThai[] = {{0x0E00, 0x0E7F}};
constexpr CodePointRange kLao[] = {{0x0E80, 0x0EFF}};
constexpr CodePointRange kTibetan[] = {{0x0F00, 0x0FFF}};
constexpr CodePointRange kMyanmar[] = {{0x1000, 0x109F}, {0xA9E0, 0xA9FF}, {0xAA60, 0xAA7F}};
constexpr CodePointRange kEthiopic[] = {{0x1200, 0x139F}, {0x2D80, 0x2DDF}, {0xAB00, 0xAB2F}};
constexpr CodePointRange kCherokee[] = {{0x13A0, 0x13FF}, {0xAB70, 0xABBF}};
constexpr CodePointRange kCanadian[] = {{0x1400, 0x167F}, {0x18B0, 0x18FF}};
constexpr CodePointRange kKhmer[] = {{0x1780, 0x17FF}, {0x19E0, 0x19FF}};
constexpr CodePointRange kMongolian[] = {{0x1800, 0x18AF}};
constexpr CodePointRange kYi[] = {{0xA000, 0xA4CF}};
// Han, kana, Hangul, bopomofo and the CJK symbol and fullwidth blocks: one family draws them all.
constexpr CodePointRange kCjk[] = {{0x1100, 0x11FF}, {0x2E80, 0x2FDF}, {0x3000, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
                                   {0xA960, 0xA97F}, {0xAC00, 0xD7FF}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF}};

// CJK first: fonts.cpp merges it after the other scripts as the fallback for every range.
constexpr ScriptFont kScripts[] = {
    {"CJK", "Noto Sans CJK SC", "Noto Sans Mono CJK SC", "fonts-noto-cjk", 0x6F22, kCjk},  // 漢
    {"Arabic", "Noto Sans Arabic", nullptr, kNotoCore, 0, kArabic},
    {"Syriac", "Noto Sans Syriac", nullptr, kNotoCore, 0, kSyriac},
    {"Thaana", "Noto Sans Thaana", nullptr, kNotoCore, 0, kThaana},
    {"NKo", "Noto Sans NKo", nullptr, kNotoCore, 0, kNko},
    {"Devanagari", "Noto Sans Devanagari", nullptr, kNotoCore, 0, kDevanagari},
    {"Bengali", "Noto Sans Bengali", nullptr, kNotoCore, 0, kBengali},
    {"Gurmukhi", "Noto Sans Gurmukhi", nullptr, kNotoCore, 0, kGurmukhi},
    {"Gujarati", "Noto Sans Gujarati", nullptr, kNotoCore, 0, kGujarati},
    {"Oriya", "Noto Sans Oriya", nullptr, kNotoCore, 0, kOriya},
    {"Tamil", "Noto Sans Tamil", nullptr, kNotoCore, 0, kTamil},
    {"Telugu", "Noto Sans Telugu", nullptr, kNotoCore, 0, kTelugu},
    {"Kannada", "Noto Sans Kannada", nullptr, kNotoCore, 0, kKannada},
    {"Malayalam", "Noto Sans Malayalam", nullptr, kNotoCore, 0, kMalayalam},
    {"Sinhala", "Noto Sans Sinhala", nullptr, kNotoCore, 0, kSinhala},
    {"Thai", "Noto Sans Thai", nullptr, kNotoCore, 0, kThai},
    {"Lao", "Noto Sans Lao", nullptr, kNotoCore, 0, kLao},
    {"Tibetan", "Noto Serif Tibetan", nullptr, kNotoCore, 0, kTibetan},
    {"Myanmar", "Noto Sans Myanmar", nullptr, kNotoCore, 0, kMyanmar},
    {"Ethiopic", "Noto Sans Ethiopic", nullptr, kNotoCore, 0, kEthiopic},
    {"Cherokee", "Noto Sans Cherokee", nullptr, kNotoCore, 0, kCherokee},
    {"Canadian Aboriginal", "Noto Sans Canadian Aboriginal", nullptr, kNotoCore, 0, kCanadian},
    {"Khmer", "Noto Sans Khmer", nullptr, kNotoCore, 0, kKhmer},
    {"Mongolian", "Noto Sans Mongolian", nullptr, kNotoCore, 0, kMongolian},
    {"Yi", "Noto Sans Yi", nullptr, kNotoCore, 0, kYi},
    {"Georgian", "Noto Sans Georgian", nullptr, kNotoCore, 0, kGeorgian},
    {"Lepcha", "Noto Sans Lepcha", nullptr, kNotoCore, 0, kLepcha},
    {"Ol Chiki", "Noto Sans Ol Chiki", nullptr, kNotoCore, 0, kOlChiki},
    {"Coptic", "Noto Sans Coptic", nullptr, kNotoCore, 0, kCoptic},
    {"Vai", "Noto Sans Vai", nullptr, kNotoCore, 0, kVai},
    {"Symbols", "Noto Sans Symbols2", nullptr, kNotoCore, 0, kSymbols},
};

}  // namespace

std::span<const ScriptFont> script_fonts() { return kScripts; }

const ScriptFont* script_of(uint32_t cp) {
    for (const ScriptFont& s : kScripts)
        for (const CodePointRange& r : s.ranges)
            if (cp >= r.first && cp <= r.last) return &s;
    return nullptr;
}

std::string missing_glyph_hint(uint32_t cp) {
    if (const ScriptFont* s = script_of(cp))
        return std::string("no font here draws this ") + s->script + " character (" + s->family + ", Debian package " + s->package + ")";
    char buf[48];
    std::snprintf(buf, sizeof buf, "no installed font has U+%04X", cp);
    return buf;
}

}  // namespace mlens
