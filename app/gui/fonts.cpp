#include "fonts.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <utility>

#include <imgui_freetype.h>

#include "font_metrics.h"

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

// Where Debian's fonts-noto-cjk puts the CJK collection, for a fontconfig that does not list it.
constexpr const char* kCjkFallback = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";
// The share of the pixel size the reference ideograph's ink covers at least (fonts.h).
constexpr double kCjkEmShare = 0.86;

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

size_t FontSet::glyph_count() const { return m_ui ? static_cast<size_t>(m_ui->Glyphs.Size) : 0; }

namespace {

// The code points of one script's ranges a font needs: those of the base ranges (the symbol
// blocks the base font may lack) and the extra ones in use, as 0-terminated ImGui ranges; empty
// when there are none.
std::vector<ImWchar> script_ranges(const ScriptFont& script, const std::set<uint32_t>& extra) {
    std::set<uint32_t> used;
    for (const CodePointRange& r : script.ranges) {
        for (const auto& b : kBaseRanges)
            for (uint32_t cp = std::max<uint32_t>(r.first, b[0]); cp <= std::min<uint32_t>(r.last, b[1]); ++cp) used.insert(cp);
        for (auto it = extra.lower_bound(r.first); it != extra.end() && *it <= r.last; ++it) used.insert(*it);
    }
    std::vector<ImWchar> ranges;
    for (auto it = used.begin(); it != used.end();) {
        uint32_t first = *it, last = *it;
        for (++it; it != used.end() && *it == last + 1; ++it) last = *it;
        ranges.insert(ranges.end(), {static_cast<ImWchar>(first), static_cast<ImWchar>(last)});
    }
    if (!ranges.empty()) ranges.push_back(0);
    return ranges;
}

// A font file's bytes in a buffer of ImGui's allocator, for the atlas to own; {nullptr, 0} when
// it cannot be read (the font is then left out). ImGui's own file loading asserts when its
// allocation fails: here the allocator throws std::bad_alloc instead (window_loop.cpp).
std::pair<void*, int> read_font_file(const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) return {nullptr, 0};
    std::pair<void*, int> out{nullptr, 0};
    if (std::fseek(file, 0, SEEK_END) == 0) {
        const long size = std::ftell(file);
        if (size > 0 && size <= INT_MAX && std::fseek(file, 0, SEEK_SET) == 0) {
            void* data = IM_ALLOC(static_cast<size_t>(size));
            if (std::fread(data, 1, static_cast<size_t>(size), file) == static_cast<size_t>(size))
                out = {data, static_cast<int>(size)};
            else
                IM_FREE(data);
        }
    }
    std::fclose(file);
    return out;
}

}  // namespace

ImFont* FontSet::load(const char* primary, bool mono, float px, const std::vector<ImWchar>& ranges, const std::set<uint32_t>& extra) {
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    ImFont* font = nullptr;
    auto merge = [&](const FontFile& f, float size, const ImWchar* glyphs) {
        ImFontConfig config;
        config.FontNo = f.index;
        config.MergeMode = font != nullptr;
        config.OversampleH = 1;
        config.PixelSnapH = true;
        auto [data, bytes] = read_font_file(f.path);
        if (!data) return;
        if (ImFont* added = atlas->AddFontFromMemoryTTF(data, bytes, size, &config, glyphs)) {
            font = added;
            m_files.push_back(f);
        }
    };
    FontFile base = find_font(primary);
    if (!base.path.empty()) merge(base, px, ranges.data());
    auto matched_size = [&](const FontFile& f, uint32_t reference) {
        return base.path.empty() ? px : matched_pixel_size(base, px, f, reference);
    };
    // Scripts the base font lacks, each from its own family and only for the code points in use;
    // CJK last, over every range, as the fallback for whatever is still missing.
    const ScriptFont& cjk = script_fonts().front();
    for (const ScriptFont& script : script_fonts().subspan(1)) {
        std::vector<ImWchar> own = script_ranges(script, extra);
        if (own.empty()) continue;
        FontFile f = find_font(script.family);
        if (f.path.empty()) continue;
        if (!mono) m_found_ui.push_back(&script);
        const ImWchar* glyphs = m_script_ranges.emplace_back(std::move(own)).data();
        merge(f, matched_size(f, script.reference), glyphs);
    }
    FontFile cjk_file = find_font(mono && cjk.mono_family ? cjk.mono_family : cjk.family);
    if (cjk_file.path.empty() && std::filesystem::exists(kCjkFallback)) cjk_file = {kCjkFallback, 0};
    if (!cjk_file.path.empty()) {
        if (!mono) m_found_ui.push_back(&cjk);
        merge(cjk_file, em_filling_pixel_size(cjk_file, cjk.reference, px, kCjkEmShare), ranges.data());
    }
    if (!font) {
        ImFontConfig config;
        config.SizePixels = px;
        font = atlas->AddFontDefault(&config);
    }
    return font;
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
    m_script_ranges.clear();
    m_found_ui.clear();
    m_ui = load("DejaVu Sans", false, size_px, m_ranges_ui, m_extra_ui);
    m_mono = load("DejaVu Sans Mono", true, std::round(size_px * 0.93f), m_ranges_mono, m_extra_mono);
    // The lookups are done; release fontconfig's configuration until the next build.
    release_font_lookup();
    atlas->Build();
    m_dirty = false;

    m_missing.clear();
    m_missing_points.clear();
    for (uint32_t cp : m_extra_ui) {
        // C1 controls are always shown escaped (display_text.h), never as glyphs.
        if (cp < 0xA0 || m_ui->FindGlyphNoFallback(static_cast<ImWchar>(cp))) continue;
        m_missing_points.push_back(cp);
        const ScriptFont* script = script_of(cp);
        auto it = std::find_if(m_missing.begin(), m_missing.end(), [&](const MissingGlyphs& m) { return m.script == script; });
        if (it == m_missing.end()) {
            const bool found = std::find(m_found_ui.begin(), m_found_ui.end(), script) != m_found_ui.end();
            it = m_missing.insert(m_missing.end(), MissingGlyphs{script, 0, script && found});
        }
        ++it->code_points;
    }
    auto rank = [](const ScriptFont* s) { return s ? static_cast<size_t>(s - script_fonts().data()) : script_fonts().size(); };
    std::sort(m_missing.begin(), m_missing.end(),
              [&](const MissingGlyphs& a, const MissingGlyphs& b) { return rank(a.script) < rank(b.script); });
}

std::string missing_fonts_text(const std::vector<MissingGlyphs>& missing) {
    auto characters = [](size_t n) { return std::to_string(n) + (n == 1 ? " character" : " characters"); };
    std::vector<std::string> parts;
    // Scripts without a font, grouped by the package that installs theirs.
    std::vector<std::string> packages;
    for (const MissingGlyphs& m : missing)
        if (m.script && !m.family_found && std::find(packages.begin(), packages.end(), m.script->package) == packages.end())
            packages.push_back(m.script->package);
    for (const std::string& package : packages) {
        std::string scripts;
        for (const MissingGlyphs& m : missing)
            if (m.script && !m.family_found && package == m.script->package)
                scripts += (scripts.empty() ? "" : ", ") + std::string(m.script->script) + " (" + characters(m.code_points) + ")";
        parts.push_back("no installed font draws " + scripts + ": Debian package " + package);
    }
    for (const MissingGlyphs& m : missing)
        if (m.script && m.family_found)
            parts.push_back(std::string(m.script->family) + " lacks " + std::to_string(m.code_points) + " " + m.script->script +
                            (m.code_points == 1 ? " character" : " characters"));
    for (const MissingGlyphs& m : missing)
        if (!m.script)
            parts.push_back(std::to_string(m.code_points) +
                            (m.code_points == 1 ? " other character has no glyph" : " other characters have no glyph"));
    std::string text;
    for (const std::string& p : parts) text += (text.empty() ? "" : "; ") + p;
    return text;
}

}  // namespace mlens
