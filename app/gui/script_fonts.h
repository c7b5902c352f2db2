// Which font draws which script, and which Debian package supplies it: the table behind the
// merged fonts (fonts.h) and behind the hint shown when a character has no glyph.
//
// Contract:
//  - script_fonts() lists the scripts the UI font does not cover by itself (DejaVu Sans covers
//    Latin, Greek, Cyrillic, Armenian, Hebrew and much of Arabic, Georgian and the symbol
//    blocks; the fonts listed here draw what it lacks), each with its Unicode
//    ranges (Basic Multilingual Plane only: this ImGui build has 16-bit code points), the
//    fontconfig family that draws it, the Debian package that installs that family, and the
//    reference character that sizes the font when it is merged (fonts.cpp). CJK ideographs fill
//    the em box as CJK fonts intend: the reference ideograph 漢 is sized to at least 0.86 of the
//    text's pixel size (em_filling_pixel_size), not to the Latin capital height, which left them
//    about 9 pixels tall at the base size. The other scripts are matched to the Latin capital
//    height through the font's own capital height (reference 0), which its designers set to sit
//    beside Latin.
//  - script_of(cp) is the entry whose ranges hold cp, or nullptr.
//  - missing_glyph_hint(cp) says why cp shows as an escape and where a font for it comes from:
//    "no font here draws this Thai character (Noto Sans Thai, Debian package fonts-noto-core)", or
//    "no installed font has U+XXXX" for a code point of no listed script.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mlens {

struct CodePointRange {
    uint32_t first;
    uint32_t last;
};

struct ScriptFont {
    const char* script;  // "Thai"
    const char* family;  // "Noto Sans Thai"
    const char* mono_family;  // a monospace family for the mono font, or nullptr (use `family`)
    const char* package;  // "fonts-noto-core"
    uint32_t reference;  // CJK: the ideograph sized to the em box; others: matched to the Latin 'H', 0 for the capital height
    std::span<const CodePointRange> ranges;
};

std::span<const ScriptFont> script_fonts();
const ScriptFont* script_of(uint32_t cp);
std::string missing_glyph_hint(uint32_t cp);

}  // namespace mlens
