// The hex view reads through its callback only the rows it shows, opens at the offset it is
// asked for anywhere in a file, scrolls by the mouse wheel and its keys to the file's last row,
// and reports the offset of the byte under the mouse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "headless.h"
#include "widgets/hex_view.h"

using namespace mlens;

namespace {

constexpr uint64_t kFileBytes = 3u << 20;
constexpr uint64_t kRowBytes = 16;

// Byte i of the file is the low byte of i * 7.
uint8_t file_byte(uint64_t i) { return static_cast<uint8_t>(i * 7); }

struct Read {
    uint64_t offset, length;
};

struct HexHarness {
    test::HeadlessImGui imgui{1200, 800};
    HexViewState state;
    std::vector<Read> reads;
    ImVec2 origin;  // where the view's rows start, in screen coordinates
    float char_w = 0, pitch = 0;
    std::optional<uint64_t> hovered;

    // One frame; the view gets a 900 x 400 window.
    void frame() {
        imgui.window_frame("hex test", 900, 400, [&] {
            HexReader read = [&](uint64_t offset, uint64_t length, uint8_t* out) -> uint64_t {
                reads.push_back({offset, length});
                const uint64_t n = std::min(length, kFileBytes - std::min(kFileBytes, offset));
                for (uint64_t i = 0; i < n; ++i) out[i] = file_byte(offset + i);
                return n;
            };
            origin = ImGui::GetCursorScreenPos();
            ImGui::PushFont(imgui.fonts().mono());
            char_w = ImGui::CalcTextSize("0").x;
            pitch = ImGui::GetTextLineHeightWithSpacing();
            ImGui::PopFont();
            hovered = hex_view("hex", state, kFileBytes, read, ByteRange{}, imgui.fonts().mono());
        });
    }
};

}  // namespace

TEST_CASE("the hex view opens far into a file and reads only the rows it shows, once") {
    HexHarness h;
    const uint64_t far = kFileBytes * 3 / 4 + 5;
    h.state.show(far);
    h.frame();
    CHECK(h.state.top() == far / kRowBytes * kRowBytes);
    REQUIRE(h.reads.size() == 1);
    CHECK(h.reads[0].offset == h.state.top());
    // Whole 16-byte rows and the 7 bytes the last row's u64 tooltip needs.
    CHECK(h.reads[0].length % kRowBytes == 7);
    const uint64_t rows = h.reads[0].length / kRowBytes;
    CHECK(rows >= static_cast<uint64_t>(kHexMinRows));
    CHECK(rows * h.pitch <= 400.0f);
    h.frame();
    CHECK(h.reads.size() == 1);  // nothing changed: no new read
}

TEST_CASE("the hex view scrolls by the mouse wheel and its keys, and stops at the file's last row") {
    HexHarness h;
    h.state.show(kFileBytes / 2);
    h.frame();
    const uint64_t start = h.state.top();
    const uint64_t rows = h.reads.back().length / kRowBytes;
    ImGuiIO& io = ImGui::GetIO();
    // A headless context maps no keys; the GLFW backend maps them the same way.
    io.KeyMap[ImGuiKey_Home] = 1;
    io.KeyMap[ImGuiKey_End] = 2;
    io.MousePos = ImVec2(h.origin.x + 40, h.origin.y + 40);
    h.frame();  // the pointer is over the view from now on
    io.MouseWheel = -2.0f;
    h.frame();
    io.MouseWheel = 0.0f;
    CHECK(h.state.top() == start + 2 * 3 * kRowBytes);
    CHECK(h.reads.back().offset == h.state.top());

    io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_End)] = true;
    h.frame();
    io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_End)] = false;
    h.frame();
    CHECK(h.state.top() == kFileBytes - rows * kRowBytes);
    // The last read stops at the end of the file.
    CHECK(h.reads.back().offset + h.reads.back().length == kFileBytes);

    io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Home)] = true;
    h.frame();
    io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Home)] = false;
    h.frame();
    CHECK(h.state.top() == 0);
}

TEST_CASE("the hex view reports the file offset of the byte under the mouse far into the file") {
    HexHarness h;
    const uint64_t far = 2'500'000;  // a multiple of 16
    h.state.show(far);
    h.frame();
    REQUIRE(h.state.top() == far);
    // Row 2, byte 5: the hex columns start after 8 offset digits and two spaces; each byte is "XX ".
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(h.origin.x + (10 + 5 * 3 + 0.5f) * h.char_w, h.origin.y + 2 * h.pitch + 2);
    h.frame();
    h.frame();
    REQUIRE(h.hovered);
    CHECK(*h.hovered == far + 2 * kRowBytes + 5);
    CHECK(h.state.top() == far);  // hovering does not scroll
}
