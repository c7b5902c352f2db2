#include "font_metrics.h"

#include <cmath>
#include <cstdlib>
#include <optional>

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_TRUETYPE_TABLES_H

namespace mlens {

namespace {

// One face of a font file, opened for measuring.
class Face {
public:
    explicit Face(const FontFile& file) {
        if (FT_Init_FreeType(&m_library) != 0) {
            m_library = nullptr;
            return;
        }
        if (FT_New_Face(m_library, file.path.c_str(), file.index, &m_face) != 0) m_face = nullptr;
    }
    ~Face() {
        if (m_face) FT_Done_Face(m_face);
        if (m_library) FT_Done_FreeType(m_library);
    }
    Face(const Face&) = delete;
    Face& operator=(const Face&) = delete;

    bool has(uint32_t cp) const { return m_face && FT_Get_Char_Index(m_face, cp) != 0; }

    // Ink rows of cp's glyph at `px`, rendered with imgui_freetype's request and load flags.
    std::optional<int> ink_rows(uint32_t cp, int px) {
        if (!m_face) return std::nullopt;
        const FT_UInt glyph = FT_Get_Char_Index(m_face, cp);
        FT_Size_RequestRec request{FT_SIZE_REQUEST_TYPE_REAL_DIM, 0, static_cast<FT_Long>(px) * 64, 0, 0};
        if (glyph == 0 || FT_Request_Size(m_face, &request) != 0 ||
            FT_Load_Glyph(m_face, glyph, FT_LOAD_NO_BITMAP | FT_LOAD_TARGET_LIGHT) != 0 ||
            FT_Render_Glyph(m_face->glyph, FT_RENDER_MODE_NORMAL) != 0)
            return std::nullopt;
        const FT_Bitmap& bitmap = m_face->glyph->bitmap;
        int first = -1, last = -1;
        for (unsigned y = 0; y < bitmap.rows; ++y) {
            const unsigned char* row = bitmap.buffer + static_cast<std::ptrdiff_t>(y) * bitmap.pitch;
            for (unsigned x = 0; x < bitmap.width; ++x)
                if (row[x] >= 128) {
                    if (first < 0) first = static_cast<int>(y);
                    last = static_cast<int>(y);
                    break;
                }
        }
        if (first < 0) return std::nullopt;
        return last - first + 1;
    }

    // The OS/2 capital height as a fraction of ascender - descender: the share of a REAL_DIM
    // pixel size a capital would take.
    std::optional<double> cap_height_fraction() const {
        if (!m_face) return std::nullopt;
        const auto* os2 = static_cast<const TT_OS2*>(FT_Get_Sfnt_Table(m_face, FT_SFNT_OS2));
        const double span = static_cast<double>(m_face->ascender) - static_cast<double>(m_face->descender);
        if (!os2 || os2->version < 2 || os2->sCapHeight <= 0 || span <= 0) return std::nullopt;
        return os2->sCapHeight / span;
    }

private:
    FT_Library m_library = nullptr;
    FT_Face m_face = nullptr;
};

}  // namespace

float em_filling_pixel_size(const FontFile& merged, uint32_t reference, float base_px, double share) {
    const int px = static_cast<int>(std::lround(base_px));
    const int target = static_cast<int>(std::ceil(share * base_px));
    Face face(merged);
    if (!face.has(reference)) return static_cast<float>(px);
    for (int size = std::max(1, px / 2); size <= 3 * px; ++size)
        if (std::optional<int> rows = face.ink_rows(reference, size); rows && *rows >= target) return static_cast<float>(size);
    return static_cast<float>(px);
}

float matched_pixel_size(const FontFile& base, float base_px, const FontFile& merged, uint32_t reference) {
    const int px = static_cast<int>(std::lround(base_px));
    Face base_face(base);
    std::optional<int> target = base_face.ink_rows('H', px);
    Face face(merged);
    if (!target) return static_cast<float>(px);
    const uint32_t cp = reference ? reference : 'H';
    if (face.has(cp)) {
        // The rendered height grows in steps with hinting, so search the sizes; ties go to the
        // size nearest base_px.
        int best = px, best_error = -1;
        for (int size = std::max(1, px / 2); size <= 2 * px; ++size) {
            std::optional<int> rows = face.ink_rows(cp, size);
            if (!rows) continue;
            const int error = std::abs(*rows - *target);
            if (best_error < 0 || error < best_error || (error == best_error && std::abs(size - px) < std::abs(best - px))) {
                best = size;
                best_error = error;
            }
        }
        return static_cast<float>(best);
    }
    std::optional<double> fraction = reference ? std::nullopt : face.cap_height_fraction();
    if (!fraction) return static_cast<float>(px);
    return static_cast<float>(std::max(1L, std::lround(*target / *fraction)));
}

}  // namespace mlens
