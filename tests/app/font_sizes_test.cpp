// Every script at one size: glyph heights measured on the rendered font atlas, and the hint that
// names the script and the Debian package when no installed font draws a character.
#include <catch2/catch.hpp>

#include <imgui.h>

#include "font_lookup.h"
#include "fonts.h"
#include "headless.h"
#include "script_fonts.h"
#include "widgets/ui.h"

using namespace mlens;

namespace {

constexpr uint32_t kIdeographHan = 0x6F22;  // 漢
constexpr uint32_t kIdeographWord = 0x8A9E;  // 語
constexpr uint32_t kIdeographSun = 0x65E5;  // 日
constexpr uint32_t kHiraganaA = 0x3042;  // あ
constexpr uint32_t kCyrillicZhe = 0x0416;  // Ж
constexpr uint32_t kThaiKoKai = 0x0E01;  // ก
constexpr uint32_t kDevanagariKa = 0x0915;  // क
constexpr uint32_t kBengaliKa = 0x0995;  // ক
constexpr uint32_t kEthiopicHa = 0x1200;  // ሀ

// Rows of the glyph's atlas rectangle holding ink (alpha at least half), first to last: the
// height the glyph is drawn at.
int ink_height(ImFont* font, uint32_t cp) {
    const ImFontGlyph* g = font->FindGlyphNoFallback(static_cast<ImWchar>(cp));
    if (!g) return 0;
    unsigned char* pixels = nullptr;
    int width = 0, height = 0;
    ImGui::GetIO().Fonts->GetTexDataAsAlpha8(&pixels, &width, &height);
    const int x0 = static_cast<int>(g->U0 * width + 0.5f), x1 = static_cast<int>(g->U1 * width + 0.5f);
    const int y0 = static_cast<int>(g->V0 * height + 0.5f), y1 = static_cast<int>(g->V1 * height + 0.5f);
    int first = -1, last = -1;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
            if (pixels[static_cast<size_t>(y) * width + x] >= 128) {
                if (first < 0) first = y;
                last = y;
                break;
            }
    return first < 0 ? 0 : last - first + 1;
}

const MissingGlyphs* missing_for(const FontSet& fonts, const char* script) {
    for (const MissingGlyphs& m : fonts.missing())
        if (m.script && std::string(m.script->script) == script) return &m;
    return nullptr;
}

}  // namespace

TEST_CASE("Latin and Cyrillic share one height; CJK ideographs fill the em box", "[fonts]") {
    REQUIRE(!find_font("DejaVu Sans").path.empty());
    REQUIRE(!find_font("Noto Sans CJK SC").path.empty());
    test::HeadlessImGui imgui;
    const std::vector<uint32_t> wanted{kIdeographHan, kIdeographWord, kIdeographSun, kHiraganaA};
    imgui.fonts().want(wanted, wanted);
    for (float scale : {1.0f, 1.5f, 2.0f}) {
        imgui.fonts().build(scale);
        for (ImFont* font : {imgui.fonts().ui(), imgui.fonts().mono()}) {
            const float em = font->FontSize;
            const int latin = ink_height(font, 'H');
            INFO("scale " << scale << ", " << (font == imgui.fonts().ui() ? "UI" : "monospace") << " font of " << em << " px, H " << latin
                          << " px");
            REQUIRE(latin > 0);
            CHECK(ink_height(font, kCyrillicZhe) == latin);
            const int han = ink_height(font, kIdeographHan);
            INFO("\xE6\xBC\xA2 " << han << " px");
            CHECK(han >= 0.85 * em);
            CHECK(han <= 1.0 * em);
            // Ideographs and kana differ in ink height by design (日 is drawn smaller than 漢).
            for (uint32_t cp : {kIdeographWord, kIdeographSun, kHiraganaA}) {
                const int cjk = ink_height(font, cp);
                INFO("U+" << std::hex << cp << std::dec << " " << cjk << " px");
                CHECK(cjk >= 0.7 * em);
                CHECK(cjk <= 1.0 * em);
            }
        }
    }
}

TEST_CASE("Thai, Devanagari, Bengali and Ethiopic render, or name the package that draws them", "[fonts]") {
    test::HeadlessImGui imgui;
    const std::vector<uint32_t> wanted{kThaiKoKai, kDevanagariKa, kBengaliKa, kEthiopicHa};
    imgui.fonts().want(wanted, {});
    imgui.fonts().build(1.0f);
    struct Case {
        uint32_t cp;
        const char* script;
        const char* family;
    };
    for (const Case& c : {Case{kThaiKoKai, "Thai", "Noto Sans Thai"}, Case{kDevanagariKa, "Devanagari", "Noto Sans Devanagari"},
                          Case{kBengaliKa, "Bengali", "Noto Sans Bengali"}, Case{kEthiopicHa, "Ethiopic", "Noto Sans Ethiopic"}}) {
        INFO(c.script);
        REQUIRE(script_of(c.cp) != nullptr);
        CHECK(std::string(script_of(c.cp)->script) == c.script);
        CHECK(std::string(script_of(c.cp)->package) == "fonts-noto-core");
        if (!find_font(c.family).path.empty()) {
            // Installed: drawn, at a size near the Latin text around it.
            const int latin = ink_height(imgui.fonts().ui(), 'H');
            const int glyph = ink_height(imgui.fonts().ui(), c.cp);
            INFO("H " << latin << " px, glyph " << glyph << " px");
            CHECK(glyph >= latin * 0.6);
            CHECK(glyph <= latin * 1.4);
            CHECK(missing_for(imgui.fonts(), c.script) == nullptr);
        } else {
            const MissingGlyphs* m = missing_for(imgui.fonts(), c.script);
            REQUIRE(m != nullptr);
            CHECK(m->code_points == 1);
            CHECK_FALSE(m->family_found);
            CHECK(missing_glyph_hint(c.cp) ==
                  std::string("no font here draws this ") + c.script + " character (" + c.family + ", Debian package fonts-noto-core)");
        }
    }
}

TEST_CASE("the missing-font line groups scripts by the package that supplies them", "[fonts]") {
    const ScriptFont* thai = script_of(kThaiKoKai);
    const ScriptFont* bengali = script_of(kBengaliKa);
    const ScriptFont* cjk = script_of(kIdeographWord);
    REQUIRE((thai && bengali && cjk));
    CHECK(missing_fonts_text({}) == "");
    CHECK(missing_fonts_text({{thai, 412, false}, {bengali, 1, false}}) ==
          "no installed font draws Thai (412 characters), Bengali (1 character): Debian package fonts-noto-core");
    CHECK(missing_fonts_text({{cjk, 3, false}, {thai, 2, false}, {bengali, 2, true}, {nullptr, 1, false}}) ==
          "no installed font draws CJK (3 characters): Debian package fonts-noto-cjk; no installed font draws Thai "
          "(2 characters): Debian package fonts-noto-core; Noto Sans Bengali lacks 2 Bengali characters; 1 other "
          "character has no glyph");
    CHECK(missing_glyph_hint(0xE000) == "no installed font has U+E000");
    CHECK(missing_glyph_hint(kIdeographWord) == "no font here draws this CJK character (Noto Sans CJK SC, Debian package fonts-noto-cjk)");
}

TEST_CASE("a CJK token piece needs no missing-font hint in the UI font", "[fonts]") {
    test::HeadlessImGui imgui;
    imgui.fonts().want({kIdeographWord}, {});
    std::vector<std::string> hints_ui, hints_private_use;
    imgui.frame([&] {
        hints_ui = ui::missing_glyph_hints("\xE8\xAA\x9E");
        hints_private_use = ui::missing_glyph_hints("a\xEE\x80\x80");  // U+E000, which no font here draws
    });
    CHECK(hints_ui.empty());
    CHECK(hints_private_use == std::vector<std::string>{"no installed font has U+E000"});
}
