// Fonts: the UI font and the monospace font, found through fontconfig, each merged with a CJK
// font so token pieces and metadata in any script the system fonts cover render as text.
//
// Contract:
//  - UI: DejaVu Sans + Noto Sans CJK; monospace (hex, values, templates): DejaVu Sans Mono +
//    Noto Sans Mono CJK. A font fontconfig cannot find is skipped; with none found, ImGui's
//    built-in font is used, so the app always has a font.
//  - The atlas holds a base set of ranges (Latin, Greek, Cyrillic, punctuation, arrows, box
//    drawing, symbols) plus the code points added with want(): documents add the code points
//    their strings use, for the UI font all of them (token pieces), for the monospace font those
//    of the text it shows. Code points above U+FFFF are not representable in this ImGui build.
//  - want() only records; needs_rebuild() tells the window loop to call build() between frames
//    and then re-upload the atlas texture. build() must not run inside a frame.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <imgui.h>

#include "font_lookup.h"

namespace mlens {

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

private:
    std::set<uint32_t> m_extra_ui;
    std::set<uint32_t> m_extra_mono;
    std::vector<ImWchar> m_ranges_ui;    // must outlive the atlas build
    std::vector<ImWchar> m_ranges_mono;
    std::vector<FontFile> m_files;
    ImFont* m_ui = nullptr;
    ImFont* m_mono = nullptr;
    float m_scale = 1.0f;
    bool m_dirty = true;
};

}  // namespace mlens
