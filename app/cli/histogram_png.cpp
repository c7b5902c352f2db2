#include "histogram_png.h"

#include <stb_easy_font.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mlens::cli {

namespace {

constexpr int kWidth = 900, kHeight = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

struct Rgb {
    uint8_t r, g, b;
};

class Canvas {
public:
    Canvas() : m_pixels(static_cast<size_t>(kWidth) * kHeight * 3, 255) {}

    // Fills [x0, x1) x [y0, y1), clipped to the picture.
    void fill(double x0, double y0, double x1, double y1, Rgb c) {
        const int ax = std::max(0, static_cast<int>(std::floor(x0))), bx = std::min(kWidth, static_cast<int>(std::ceil(x1)));
        const int ay = std::max(0, static_cast<int>(std::floor(y0))), by = std::min(kHeight, static_cast<int>(std::ceil(y1)));
        for (int y = ay; y < by; ++y)
            for (int x = ax; x < bx; ++x) {
                uint8_t* p = &m_pixels[(static_cast<size_t>(y) * kWidth + x) * 3];
                p[0] = c.r;
                p[1] = c.g;
                p[2] = c.b;
            }
    }

    // stb_easy_font emits axis-aligned quads (4 vertices of 16 bytes); drawn at `scale`.
    void text(double x, double y, const std::string& s, double scale = 1.5) {
        std::vector<char> buf(s.begin(), s.end());
        buf.push_back('\0');
        std::vector<char> quads(buf.size() * 270 + 16);
        unsigned char color[4] = {40, 40, 40, 255};
        int n = stb_easy_font_print(0, 0, buf.data(), color, quads.data(), static_cast<int>(quads.size()));
        for (int q = 0; q < n; ++q) {
            float v0[2], v2[2];
            std::memcpy(v0, quads.data() + q * 64, 8);
            std::memcpy(v2, quads.data() + q * 64 + 32, 8);
            fill(x + v0[0] * scale, y + v0[1] * scale, x + v2[0] * scale, y + v2[1] * scale, {40, 40, 40});
        }
    }

    double text_width(const std::string& s, double scale = 1.5) {
        std::vector<char> buf(s.begin(), s.end());
        buf.push_back('\0');
        return stb_easy_font_width(buf.data()) * scale;
    }

    std::vector<uint8_t> png() const {
        std::vector<uint8_t> bytes;
        auto append = [](void* context, void* data, int size) {
            auto* out = static_cast<std::vector<uint8_t>*>(context);
            out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
        };
        if (!stbi_write_png_to_func(append, &bytes, kWidth, kHeight, 3, m_pixels.data(), kWidth * 3)) bytes.clear();
        return bytes;
    }

private:
    std::vector<uint8_t> m_pixels;
};

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

}  // namespace

std::vector<uint8_t> histogram_png(const Histogram& h, const std::string& title, bool log_counts) {
    Canvas c;
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
    uint64_t peak = 0;
    for (uint64_t n : h.counts) peak = std::max(peak, n);
    auto height = [&](uint64_t n) {
        if (peak == 0) return 0.0;
        return log_counts ? std::log10(1.0 + static_cast<double>(n)) / std::log10(1.0 + static_cast<double>(peak))
                          : static_cast<double>(n) / static_cast<double>(peak);
    };
    const double bar = h.counts.empty() ? plot_w : plot_w / static_cast<double>(h.counts.size());
    for (size_t i = 0; i < h.counts.size(); ++i) {
        const double top = kTop + plot_h * (1.0 - height(h.counts[i]));
        // Whole-pixel edges, so that wide bars all keep the same one-pixel gap.
        const double gap = bar > 4 ? 1.0 : 0.0;
        const double left = std::round(kLeft + i * bar), right = std::round(kLeft + (i + 1) * bar) - gap;
        c.fill(left, top, right, kTop + plot_h, {66, 118, 190});
    }
    c.fill(kLeft - 2, kTop, kLeft, kTop + plot_h + 2, {40, 40, 40});            // y axis
    c.fill(kLeft - 2, kTop + plot_h, kLeft + plot_w, kTop + plot_h + 2, {40, 40, 40});   // x axis
    c.text(kLeft, 10, title + (log_counts ? "  (log counts)" : ""));
    c.text(kLeft, kTop + plot_h + 12, num(h.lo));
    const std::string hi = num(h.hi);
    c.text(kLeft + plot_w - c.text_width(hi), kTop + plot_h + 12, hi);
    const std::string top = std::to_string(peak);
    c.text(std::max(2.0, kLeft - 6 - c.text_width(top)), kTop, top);
    c.text(kLeft - 6 - c.text_width("0"), kTop + plot_h - 10, "0");
    return c.png();
}

}  // namespace mlens::cli
