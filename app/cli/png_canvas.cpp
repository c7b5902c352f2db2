#include "png_canvas.h"

#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "font_lookup.h"
#include "mlens/text/utf8.h"

namespace mlens::cli {

namespace {

// Code points of UTF-8 text; a byte that starts no valid sequence becomes U+FFFD.
std::vector<uint32_t> code_points(const std::string& s) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        const size_t length = utf8_decode(std::string_view(s).substr(i), cp);
        out.push_back(length == 0 ? 0xFFFD : cp);
        i += length == 0 ? 1 : length;
    }
    return out;
}

}  // namespace

Result<TextFace> TextFace::load(const std::string& path, int index) {
    TextFace face;
    std::ifstream in(path, std::ios::binary);
    face.m_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) return Error{ErrorCode::E_NO_FONT, "", std::nullopt, "cannot read the font " + path};
    const int offset = face.m_bytes.empty() ? -1 : stbtt_GetFontOffsetForIndex(face.m_bytes.data(), index);
    if (offset < 0 || !stbtt_InitFont(&face.m_info, face.m_bytes.data(), offset))
        return Error{ErrorCode::E_NO_FONT, "", std::nullopt, "not a TrueType font: " + path};
    return face;
}

Result<TextFace> TextFace::system_ui() {
    FontFile file = find_font("DejaVu Sans");
    release_font_lookup();
    if (file.path.empty())
        return Error{ErrorCode::E_NO_FONT, "", std::nullopt, "fontconfig finds no \"DejaVu Sans\" font to write the labels with"};
    return load(file.path, file.index);
}

double TextFace::width(const std::string& text, double px) const {
    const float scale = stbtt_ScaleForPixelHeight(&m_info, static_cast<float>(px));
    double w = 0;
    const std::vector<uint32_t> cps = code_points(text);
    for (size_t i = 0; i < cps.size(); ++i) {
        int advance = 0, bearing = 0;
        stbtt_GetCodepointHMetrics(&m_info, static_cast<int>(cps[i]), &advance, &bearing);
        w += advance * scale;
        if (i + 1 < cps.size()) w += stbtt_GetCodepointKernAdvance(&m_info, static_cast<int>(cps[i]), static_cast<int>(cps[i + 1])) * scale;
    }
    return w;
}

double TextFace::ascent(double px) const {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetCodepointBox(&m_info, 'H', &x0, &y0, &x1, &y1);
    return y1 * stbtt_ScaleForPixelHeight(&m_info, static_cast<float>(px));
}

PngCanvas::PngCanvas(int width, int height, Rgb background)
    : m_width(width), m_height(height), m_pixels(static_cast<size_t>(width) * height * 3) {
    fill(0, 0, width, height, background);
}

void PngCanvas::fill(double x0, double y0, double x1, double y1, Rgb c) {
    const int ax = std::max(0, static_cast<int>(std::floor(x0))), bx = std::min(m_width, static_cast<int>(std::ceil(x1)));
    const int ay = std::max(0, static_cast<int>(std::floor(y0))), by = std::min(m_height, static_cast<int>(std::ceil(y1)));
    for (int y = ay; y < by; ++y)
        for (int x = ax; x < bx; ++x) {
            uint8_t* p = &m_pixels[(static_cast<size_t>(y) * m_width + x) * 3];
            p[0] = c.r;
            p[1] = c.g;
            p[2] = c.b;
        }
}

void PngCanvas::blend(int x, int y, uint8_t coverage, Rgb c) {
    if (x < 0 || y < 0 || x >= m_width || y >= m_height || coverage == 0) return;
    uint8_t* p = &m_pixels[(static_cast<size_t>(y) * m_width + x) * 3];
    const uint8_t source[3] = {c.r, c.g, c.b};
    for (int k = 0; k < 3; ++k) p[k] = static_cast<uint8_t>((source[k] * coverage + p[k] * (255 - coverage) + 127) / 255);
}

void PngCanvas::text(const TextFace& face, double px, double x, double baseline, const std::string& text, Rgb c, bool vertical) {
    const float scale = stbtt_ScaleForPixelHeight(&face.m_info, static_cast<float>(px));
    const std::vector<uint32_t> cps = code_points(text);
    double pen = 0;  // along the baseline, from its start
    std::vector<unsigned char> glyph;
    for (size_t i = 0; i < cps.size(); ++i) {
        const int cp = static_cast<int>(cps[i]);
        // Subpixel pen positions keep the spacing even; rows stay on whole pixels for sharp text.
        const double start = vertical ? baseline - pen : x + pen;
        const float shift = static_cast<float>(vertical ? std::ceil(start) - start : start - std::floor(start));
        int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
        stbtt_GetCodepointBitmapBoxSubpixel(&face.m_info, cp, scale, scale, shift, 0, &x0, &y0, &x1, &y1);
        const int w = x1 - x0, h = y1 - y0;
        if (w > 0 && h > 0) {
            glyph.assign(static_cast<size_t>(w) * h, 0);
            stbtt_MakeCodepointBitmapSubpixel(&face.m_info, glyph.data(), w, h, w, scale, scale, shift, 0, cp);
            for (int gy = 0; gy < h; ++gy)
                for (int gx = 0; gx < w; ++gx) {
                    const uint8_t coverage = glyph[static_cast<size_t>(gy) * w + gx];
                    if (vertical)
                        blend(static_cast<int>(std::lround(x)) + y0 + gy, static_cast<int>(std::ceil(start)) - x0 - gx - 1, coverage, c);
                    else
                        blend(static_cast<int>(std::floor(start)) + x0 + gx, static_cast<int>(std::lround(baseline)) + y0 + gy, coverage,
                              c);
                }
        }
        int advance = 0, bearing = 0;
        stbtt_GetCodepointHMetrics(&face.m_info, cp, &advance, &bearing);
        pen += advance * scale;
        if (i + 1 < cps.size()) pen += stbtt_GetCodepointKernAdvance(&face.m_info, cp, static_cast<int>(cps[i + 1])) * scale;
    }
}

std::vector<uint8_t> PngCanvas::png() const {
    std::vector<uint8_t> bytes;
    auto append = [](void* context, void* data, int size) {
        auto* out = static_cast<std::vector<uint8_t>*>(context);
        out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
    };
    if (!stbi_write_png_to_func(append, &bytes, m_width, m_height, 3, m_pixels.data(), m_width * 3)) bytes.clear();
    return bytes;
}

}  // namespace mlens::cli
