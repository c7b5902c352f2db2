// Fonts: the UI font and the monospace font, found through fontconfig, each merged with the
// fonts of other scripts so token pieces and metadata in any script the system fonts cover
// render as text, all at one visual size.
//
// Contract:
//  - UI: DejaVu Sans, then for each script of script_fonts.h that the wanted code points use, its
//    family (Noto Sans Thai, Noto Sans Devanagari, ...) for that script's code points, then Noto
//    Sans CJK for every range; monospace (hex, values, templates): DejaVu Sans Mono, the same
//    script fonts, then Noto Sans Mono CJK. A font fontconfig cannot find is skipped; with none
//    found, ImGui's built-in font is used, so the app always has a font.
//  - One visual size: each merged font but CJK is sized so its script's reference character
//    (script_fonts.h) is as tall as the base font's 'H'; CJK so that the ideograph 漢 covers at
//    least kCjkEmShare of the pixel size (the em box CJK fonts fill). Both are measured on the
//    font files (font_metrics.h), never by a fixed factor. Glyphs of merged fonts sit on the base
//    baseline.
//  - The atlas holds a base set of ranges (Latin, Greek, Cyrillic, punctuation, arrows, box
//    drawing, symbols) plus the code points added with want(): documents add the code points
//    their strings use, for the UI font all of them (token pieces), for the monospace font those
//    of the text it shows. Code points above U+FFFF are not representable in this ImGui build.
//  - missing() lists, after build(), the wanted UI code points no merged font has a glyph for,
//    counted by script (script nullptr: code points of no listed script), in script_fonts order,
//    each with whether the script's family was found (then that font lacks the characters).
//  - want() only records; needs_rebuild() tells the window loop to call build() between frames
//    and then re-upload the atlas texture. build() must not run inside a frame.
#pragma once

#include <cstdint>
#include <list>
#include <set>
#include <string>
#include <vector>

#include <imgui.h>

#include "font_lookup.h"
#include "script_fonts.h"

namespace mlens {

struct MissingGlyphs {
    const ScriptFont* script = nullptr;  // nullptr: code points of no listed script
    size_t code_points = 0;
    bool family_found = false;  // the script's font is installed but lacks these characters
};

// One line for the views: "no installed font draws Thai (412 characters), Ethiopic (97
// characters): Debian package fonts-noto-core; Noto Sans Bengali lacks 2 Bengali characters; 3
// other characters have no glyph"; empty when nothing is missing.
std::string missing_fonts_text(const std::vector<MissingGlyphs>& missing);

class FontSet {
public:
    static constexpr float kBaseSize = 15.0f;

    void want(const std::vector<uint32_t>& ui_code_points, const std::vector<uint32_t>& mono_code_points);
    bool needs_rebuild() const { return m_dirty; }
    // Rebuilds ImGui's atlas: the UI font at kBaseSize × scale pixels, monospace slightly smaller.
    void build(float scale);
    float scale() const { return m_scale; }

    ImFont* ui() const { return m_ui; }
    ImFont* mono() const { return m_mono; }
    const std::vector<FontFile>& files() const { return m_files; }
    size_t glyph_count() const;
    const std::vector<MissingGlyphs>& missing() const { return m_missing; }
    // The code points counted in missing(), sorted.
    const std::vector<uint32_t>& missing_code_points() const { return m_missing_points; }

private:
    ImFont* load(const char* primary, bool mono, float px, const std::vector<ImWchar>& ranges, const std::set<uint32_t>& extra);

    std::set<uint32_t> m_extra_ui;
    std::set<uint32_t> m_extra_mono;
    std::vector<ImWchar> m_ranges_ui;  // must outlive the atlas build
    std::vector<ImWchar> m_ranges_mono;
    std::list<std::vector<ImWchar>> m_script_ranges;  // one per merged script font, same lifetime
    std::vector<MissingGlyphs> m_missing;
    std::vector<uint32_t> m_missing_points;
    std::vector<const ScriptFont*> m_found_ui;  // script families merged into the UI font
    std::vector<FontFile> m_files;
    ImFont* m_ui = nullptr;
    ImFont* m_mono = nullptr;
    float m_scale = 1.0f;
    bool m_dirty = true;
};

}  // namespace mlens
