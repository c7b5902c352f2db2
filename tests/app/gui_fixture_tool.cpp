// gui_fixture_tool: helpers for the window smoke test.
//   gui_fixture_tool write OUT.gguf          writes the GUI fixture
//   gui_fixture_tool check-png FILE W H      checks FILE is a W×H PNG that is not one flat colour
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include <stb_image.h>

#include "gui_fixture.h"

namespace {

int check_png(const char* path, int want_w, int want_h) {
    int w = 0, h = 0, channels = 0;
    unsigned char* pixels = stbi_load(path, &w, &h, &channels, 3);
    if (!pixels) {
        std::fprintf(stderr, "check-png: cannot read %s as an image\n", path);
        return 1;
    }
    std::set<uint32_t> colours;
    size_t n = static_cast<size_t>(w) * static_cast<size_t>(h);
    for (size_t i = 0; i < n && colours.size() < 1000; ++i)
        colours.insert(static_cast<uint32_t>(pixels[i * 3]) << 16 | static_cast<uint32_t>(pixels[i * 3 + 1]) << 8 | pixels[i * 3 + 2]);
    stbi_image_free(pixels);
    if (w != want_w || h != want_h) {
        std::fprintf(stderr, "check-png: %s is %dx%d, expected %dx%d\n", path, w, h, want_w, want_h);
        return 1;
    }
    // Rendered text is anti-aliased, so a real frame has many distinct colours.
    if (colours.size() < 32) {
        std::fprintf(stderr, "check-png: %s has only %zu distinct colours: nothing was drawn\n", path, colours.size());
        return 1;
    }
    std::printf("check-png: %s %dx%d, %zu+ colours\n", path, w, h, colours.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "write") == 0) {
        if (mlens::test::write_gui_fixture(argv[2])) return 0;
        std::fprintf(stderr, "gui_fixture_tool: cannot write %s\n", argv[2]);
        return 1;
    }
    if (argc == 5 && std::strcmp(argv[1], "check-png") == 0) return check_png(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    std::fprintf(stderr, "usage: gui_fixture_tool write OUT.gguf | check-png FILE W H\n");
    return 2;
}
