#include "fonts.h"

#include <cmath>
#include <filesystem>

#include <imgui_freetype.h>

namespace mlens {

namespace {

constexpr ImWchar kBaseRanges[][2] = {
    {0x0020, 0x052F},  // Latin, Latin-1, Latin Extended A/B, IPA, Greek, Cyrillic
    {0x1E00, 0x1FFF},  // Latin Extended Additional, Greek Extended
    {0x2000, 0x22FF},  // punctuation, currency, letterlike, arrows, math operators
    {0x2300, 0x23FF},  // technical
    {0x2500, 0x27BF},  // box drawing, blocks, shapes, symbols, dingbats
    {0x3000, 0x303F},  // CJK punctuation
    {0xFFFD, 0xFFFD},  // replacement character
};

constexpr const char* kCjkFallback = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";

bool in_base_ranges(uint32_t cp) {
    for (const auto& r : kBaseRanges)
        if (cp >= r[0] && cp <= r[1]) return true;
    return false;
}

// Adds what the base ranges lack; returns true if anything was new.
bool add_code_points(const std::vector<uint32_t>& code_points, std::set<uint32_t>& extra) {
    bool added = false;
    for (uint32_t cp : code_points)
        if (cp >= 0x80 && cp <= 0xFFFF && !in_base_ranges(cp)) added = extra.insert(cp).second || added;
    return added;
}

// ImGui glyph ranges: the base ranges, then runs of consecutive extra code points, 0-terminated.
std::vector<ImWchar> glyph_ranges(const std::set<uint32_t>& extra) {
    std::vector<ImWchar> ranges;
    for (const auto& r : kBaseRanges) ranges.insert(ranges.end(), {r[0], r[1]});
    for (auto it = extra.begin(); it != extra.end();) {
        uint32_t first = *it, last = *it;
        for (++it; it != extra.end() && *it == last + 1; ++it) last = *it;
        ranges.insert(ranges.end(), {static_cast<ImWchar>(first), static_cast<ImWchar>(last)});
    }
    ranges.push_back(0);
    return ranges;
}

}  // namespace

void FontSet::want(const std::vector<uint32_t>& ui_code_points, const std::vector<uint32_t>& mono_code_points) {
    if (add_code_points(ui_code_points, m_extra_ui)) m_dirty = true;
    if (add_code_points(mono_code_points, m_extra_mono)) m_dirty = true;
}

size_t FontSet::glyph_count() const {
    return m_ui ? static_cast<size_t>(m_ui->Glyphs.Size) : 0;
}

void FontSet::build(float scale) {
    m_scale = scale;
    const float size_px = std::round(kBaseSize * scale);
    m_ranges_ui = glyph_ranges(m_extra_ui);
    m_ranges_mono = glyph_ranges(m_extra_mono);

    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    atlas->Clear();
    atlas->FontBuilderIO = ImGuiFreeType::GetBuilderForFreeType();
    atlas->FontBuilderFlags = ImGuiFreeTypeBuilderFlags_LightHinting;
    atlas->TexDesiredWidth = m_extra_ui.size() > 2000 ? 4096 : 2048;
    m_files.clear();

    auto load = [&](const char* primary, const char* cjk, const char* cjk_fallback, float px,
                    const std::vector<ImWchar>& ranges) -> ImFont* {
        ImFont* font = nullptr;
        FontFile base = find_font(primary);
        FontFile extra = find_font(cjk);
        if (extra.path.empty() && cjk_fallback && std::filesystem::exists(cjk_fallback)) extra = {cjk_fallback, 0};
        for (const FontFile& f : {base, extra}) {
            if (f.path.empty()) continue;
            ImFontConfig config;
            config.FontNo = f.index;
            config.MergeMode = font != nullptr;
            config.OversampleH = 1;
            config.PixelSnapH = true;
            ImFont* added = atlas->AddFontFromFileTTF(f.path.c_str(), px, &config, ranges.data());
            if (added) {
                font = added;
                m_files.push_back(f);
            }
        }
        if (!font) {
            ImFontConfig config;
            config.SizePixels = px;
            font = atlas->AddFontDefault(&config);
        }
        return font;
    };
    m_ui = load("DejaVu Sans", "Noto Sans CJK SC", kCjkFallback, size_px, m_ranges_ui);
    m_mono = load("DejaVu Sans Mono", "Noto Sans Mono CJK SC", kCjkFallback, std::round(size_px * 0.93f), m_ranges_mono);
    // The lookups are done; release fontconfig's configuration until the next build.
    release_font_lookup();
    atlas->Build();
    m_dirty = false;
}

}  // namespace mlens
