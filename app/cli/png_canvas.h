// An RGB picture drawn with filled rectangles and TrueType text, encoded as PNG: what the CLI
// draws its plots on (`mlens hist --png`). Nothing here is part of the core.
//
// Contract:
//  - TextFace::load reads a font file (a face of a collection by index) with stb_truetype;
//    TextFace::system_ui() loads "DejaVu Sans" through fontconfig (app/common/font_lookup.h), the
//    face the app's interface uses, and fails with E_NO_FONT when fontconfig has none.
//  - Text is antialiased (coverage blended over the picture), laid out with the font's advances
//    and kerning from a baseline; UTF-8 is decoded, an invalid byte draws U+FFFD. Vertical text
//    reads bottom to top (a y axis title).
//  - fill() clips to the picture; png() returns the file's bytes, empty when the encoder failed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <stb_truetype.h>

#include "mlens/result.h"

namespace mlens::cli {

struct Rgb {
    uint8_t r, g, b;
};

class TextFace {
public:
    // stb_truetype keeps a pointer into the bytes: a face moves (the buffer with it), never copies.
    TextFace() = default;
    TextFace(TextFace&&) = default;
    TextFace& operator=(TextFace&&) = default;
    TextFace(const TextFace&) = delete;
    TextFace& operator=(const TextFace&) = delete;

    static Result<TextFace> load(const std::string& path, int index);
    static Result<TextFace> system_ui();

    // Width in pixels of `text` at `px` pixels line height.
    double width(const std::string& text, double px) const;
    // Distance from the baseline to the top of capitals, in pixels at `px`.
    double ascent(double px) const;

private:
    friend class PngCanvas;
    std::vector<unsigned char> m_bytes;
    stbtt_fontinfo m_info{};
};

class PngCanvas {
public:
    PngCanvas(int width, int height, Rgb background);

    int width() const { return m_width; }
    int height() const { return m_height; }
    // Fills [x0, x1) x [y0, y1), clipped to the picture.
    void fill(double x0, double y0, double x1, double y1, Rgb c);
    // Draws `text` with its baseline starting at (x, baseline); vertical: rotated a quarter turn
    // counter-clockwise, (x, baseline) then being the baseline's start at the bottom.
    void text(const TextFace& face, double px, double x, double baseline, const std::string& text, Rgb c, bool vertical = false);
    std::vector<uint8_t> png() const;

private:
    void blend(int x, int y, uint8_t coverage, Rgb c);

    int m_width, m_height;
    std::vector<uint8_t> m_pixels;
};

}  // namespace mlens::cli
