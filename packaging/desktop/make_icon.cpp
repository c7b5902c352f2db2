// make_icon OUT_DIR SIZE...: draws the ModelLens icon — a grid of tensor cells under a lens — as
// OUT_DIR/modellens.svg and OUT_DIR/SIZE/modellens.png for each SIZE. One list of shapes feeds
// both, so the bitmaps are the vector icon rasterized (4x4 samples a pixel), with no SVG
// renderer needed at build time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <stb_image_write.h>

namespace {

constexpr double kCanvas = 256.0;  // the SVG's viewBox is 0 0 256 256

enum class Kind { rounded_rect, disc, ring, capsule };

struct Shape {
    Kind kind;
    double a, b, c, d, e;  // rect: x y w h radius; disc: cx cy r; ring: cx cy r width; capsule: x1 y1 x2 y2 width
    unsigned rgb;
    double opacity;
};

// The icon: a slate tile, a 4x4 grid of cells coloured like a weight heat map, a lens over it.
std::vector<Shape> icon_shapes() {
    std::vector<Shape> shapes = {{Kind::rounded_rect, 16, 16, 224, 224, 48, 0x1E293B, 1.0}};
    const unsigned heat[4][4] = {{0x0F766E, 0x14B8A6, 0x5EEAD4, 0x14B8A6},
                                 {0x14B8A6, 0xF59E0B, 0x5EEAD4, 0x0F766E},
                                 {0x5EEAD4, 0x14B8A6, 0xFBBF24, 0xF59E0B},
                                 {0x0F766E, 0x5EEAD4, 0xF59E0B, 0x14B8A6}};
    for (int row = 0; row < 4; ++row)
        for (int col = 0; col < 4; ++col)
            shapes.push_back({Kind::rounded_rect, 44.0 + col * 44, 44.0 + row * 44, 36, 36, 7, heat[row][col], 1.0});
    shapes.push_back({Kind::disc, 142, 142, 58, 0, 0, 0xF8FAFC, 0.22});
    shapes.push_back({Kind::ring, 142, 142, 58, 14, 0, 0xF8FAFC, 1.0});
    shapes.push_back({Kind::capsule, 188, 188, 222, 222, 24, 0xF8FAFC, 1.0});
    return shapes;
}

bool inside(const Shape& s, double x, double y) {
    switch (s.kind) {
        case Kind::rounded_rect: {
            const double cx = std::clamp(x, s.a + s.e, s.a + s.c - s.e), cy = std::clamp(y, s.b + s.e, s.b + s.d - s.e);
            return x >= s.a && x <= s.a + s.c && y >= s.b && y <= s.b + s.d && std::hypot(x - cx, y - cy) <= s.e;
        }
        case Kind::disc:
            return std::hypot(x - s.a, y - s.b) <= s.c;
        case Kind::ring:
            return std::abs(std::hypot(x - s.a, y - s.b) - s.c) <= s.d / 2;
        case Kind::capsule: {
            const double dx = s.c - s.a, dy = s.d - s.b;
            const double t = std::clamp(((x - s.a) * dx + (y - s.b) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
            return std::hypot(x - (s.a + t * dx), y - (s.b + t * dy)) <= s.e / 2;
        }
    }
    return false;
}

std::string hex(unsigned rgb) {
    char text[8];
    std::snprintf(text, sizeof text, "#%06X", rgb);
    return text;
}

std::string svg(const std::vector<Shape>& shapes) {
    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"256\" height=\"256\" viewBox=\"0 0 256 256\">\n";
    auto num = [](double v) {
        char t[32];
        std::snprintf(t, sizeof t, "%g", v);
        return std::string(t);
    };
    for (const Shape& s : shapes) {
        const std::string opacity = s.opacity < 1 ? " opacity=\"" + num(s.opacity) + "\"" : "";
        switch (s.kind) {
            case Kind::rounded_rect:
                out += "  <rect x=\"" + num(s.a) + "\" y=\"" + num(s.b) + "\" width=\"" + num(s.c) + "\" height=\"" + num(s.d) +
                    "\" rx=\"" + num(s.e) + "\" fill=\"" + hex(s.rgb) + "\"" + opacity + "/>\n";
                break;
            case Kind::disc:
                out += "  <circle cx=\"" + num(s.a) + "\" cy=\"" + num(s.b) + "\" r=\"" + num(s.c) + "\" fill=\"" + hex(s.rgb) + "\"" +
                    opacity + "/>\n";
                break;
            case Kind::ring:
                out += "  <circle cx=\"" + num(s.a) + "\" cy=\"" + num(s.b) + "\" r=\"" + num(s.c) + "\" fill=\"none\" stroke=\"" +
                    hex(s.rgb) + "\" stroke-width=\"" + num(s.d) + "\"" + opacity + "/>\n";
                break;
            case Kind::capsule:
                out += "  <line x1=\"" + num(s.a) + "\" y1=\"" + num(s.b) + "\" x2=\"" + num(s.c) + "\" y2=\"" + num(s.d) + "\" stroke=\"" +
                    hex(s.rgb) + "\" stroke-width=\"" + num(s.e) + "\" stroke-linecap=\"round\"" + opacity + "/>\n";
                break;
        }
    }
    return out + "</svg>\n";
}

// Straight-alpha RGBA, each shape composited over the ones before it.
std::vector<unsigned char> raster(const std::vector<Shape>& shapes, int size) {
    constexpr int kSamples = 4;
    std::vector<unsigned char> pixels(static_cast<size_t>(size) * size * 4);
    const double unit = kCanvas / size;
    for (int py = 0; py < size; ++py)
        for (int px = 0; px < size; ++px) {
            double r = 0, g = 0, b = 0, a = 0;  // premultiplied
            for (const Shape& s : shapes) {
                int hits = 0;
                for (int sy = 0; sy < kSamples; ++sy)
                    for (int sx = 0; sx < kSamples; ++sx)
                        hits += inside(s, (px + (sx + 0.5) / kSamples) * unit, (py + (sy + 0.5) / kSamples) * unit);
                const double alpha = s.opacity * hits / (kSamples * kSamples);
                r = ((s.rgb >> 16) & 255) / 255.0 * alpha + r * (1 - alpha);
                g = ((s.rgb >> 8) & 255) / 255.0 * alpha + g * (1 - alpha);
                b = (s.rgb & 255) / 255.0 * alpha + b * (1 - alpha);
                a = alpha + a * (1 - alpha);
            }
            unsigned char* p = &pixels[(static_cast<size_t>(py) * size + px) * 4];
            p[0] = static_cast<unsigned char>(std::lround(a > 0 ? r / a * 255 : 0));
            p[1] = static_cast<unsigned char>(std::lround(a > 0 ? g / a * 255 : 0));
            p[2] = static_cast<unsigned char>(std::lround(a > 0 ? b / a * 255 : 0));
            p[3] = static_cast<unsigned char>(std::lround(a * 255));
        }
    return pixels;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: make_icon OUT_DIR SIZE...\n");
        return 2;
    }
    const std::filesystem::path out = argv[1];
    const std::vector<Shape> shapes = icon_shapes();
    std::filesystem::create_directories(out);
    std::ofstream(out / "modellens.svg") << svg(shapes);
    for (int i = 2; i < argc; ++i) {
        const int size = std::atoi(argv[i]);
        if (size < 8 || size > 1024) {
            std::fprintf(stderr, "make_icon: size %s is outside 8..1024\n", argv[i]);
            return 2;
        }
        const std::filesystem::path dir = out / argv[i];
        std::filesystem::create_directories(dir);
        const std::vector<unsigned char> pixels = raster(shapes, size);
        if (!stbi_write_png((dir / "modellens.png").c_str(), size, size, 4, pixels.data(), size * 4)) {
            std::fprintf(stderr, "make_icon: cannot write %s\n", (dir / "modellens.png").c_str());
            return 1;
        }
    }
    return 0;
}
