#include <catch2/catch.hpp>

#include <string>

#include "headless.h"
#include "state/display_text.h"
#include "widgets/table_cell.h"

using namespace mlens;

namespace {

// One unit per character, two for a character outside ASCII other than the ellipsis.
float units(std::string_view ch) {
    if (ch == "\xE2\x80\xA6") return 1.0f;
    return ch.size() == 1 ? 1.0f : 2.0f;
}

std::string shown(std::string_view text, float width) {
    size_t n = ui::elide_length(text, width, units);
    return n == text.size() ? std::string(text) : std::string(text.substr(0, n)) + "\xE2\x80\xA6";
}

}  // namespace

TEST_CASE("a cell text that fits is shown whole") {
    CHECK(shown("E_TENSOR_OUT_OF_BOUNDS", 22.0f) == "E_TENSOR_OUT_OF_BOUNDS");
    CHECK(shown("", 0.0f) == "");
}

TEST_CASE("a cell text too wide is cut at a word boundary with an ellipsis") {
    CHECK(shown("tokenizer.ggml.scores", 18.0f) == "tokenizer.ggml.\xE2\x80\xA6");
    CHECK(shown("E_TENSOR_OUT_OF_BOUNDS", 14.0f) == "E_TENSOR_OUT_\xE2\x80\xA6");
    CHECK(shown("file ends at 2057130 of 3085696 bytes", 20.0f) == "file ends at\xE2\x80\xA6");
    CHECK(shown("handle_gemma3: set tokenizer.ggml.scores", 30.0f) == "handle_gemma3: set tokenizer.\xE2\x80\xA6");
    CHECK(shown("[FLOAT32 \xC3\x97 262144] 0.0, 1.0", 16.0f) == "[FLOAT32 \xC3\x97\xE2\x80\xA6");
}

TEST_CASE("a first word wider than the cell is cut between whole characters") {
    CHECK(shown("Supercalifragilistic", 6.0f) == "Super\xE2\x80\xA6");
    CHECK(shown("Supercalifragilistic", 0.5f) == "\xE2\x80\xA6");
    // Three-byte characters two units wide: two of them and the ellipsis fit in 5.
    CHECK(shown("\xE8\xAA\x9E\xE8\xAA\x9E\xE8\xAA\x9E\xE8\xAA\x9E", 5.0f) == "\xE8\xAA\x9E\xE8\xAA\x9E\xE2\x80\xA6");
    // Invalid bytes count as one character each and are never split from a valid sequence.
    CHECK(ui::elide_length("\xFF\xFE"
                           "abcdef",
                           4.0f, units) == 3);
}

TEST_CASE("with the app's font, a code elided to a narrow cell keeps whole words") {
    test::HeadlessImGui imgui;
    imgui.frame([] {
        const std::string code = "E_TENSOR_OUT_OF_BOUNDS";
        const float whole = ImGui::CalcTextSize(code.c_str()).x;
        CHECK(ui::elided_text(code, whole) == code);
        const float cut = ImGui::CalcTextSize("E_TENSOR_OUT_\xE2\x80\xA6").x;
        CHECK(ui::elided_text(code, cut) == "E_TENSOR_OUT_\xE2\x80\xA6");
        CHECK(ui::elided_text(code, cut + 4.0f) == "E_TENSOR_OUT_\xE2\x80\xA6");
        CHECK(ui::elided_text("file ends at 2057130 of 3085696 bytes", ImGui::CalcTextSize("file ends at 2057").x) ==
              "file ends at\xE2\x80\xA6");
    });
}

TEST_CASE("a name too wide keeps its last words, cut at a word boundary") {
    auto shown = [](std::string_view text, float width) {
        const size_t tail = ui::elide_start(text, width, units);
        if (tail == 0) return std::string(text);
        if (tail == text.size()) return std::string("(cut at the end)");
        return "\xE2\x80\xA6" + std::string(text.substr(tail));
    };
    CHECK(shown("qwen2vl.vision.spatial_merge_size", 20.0f) == "\xE2\x80\xA6spatial_merge_size");
    CHECK(shown("model.layers.12.mlp.experts.3.down_proj.weight", 28.0f) == "\xE2\x80\xA6" "experts.3.down_proj.weight");
    CHECK(shown("blk.0.attn_output.weight", 16.0f) == "\xE2\x80\xA6output.weight");
    CHECK(shown("blk.0.attn_output.weight", 24.0f) == "blk.0.attn_output.weight");
    // No word boundary to keep a suffix from: cut at the end instead.
    CHECK(shown("Supercalifragilistic", 6.0f) == "(cut at the end)");
}

TEST_CASE("a long value wraps before spaces and never inside a number") {
    using Lines = std::vector<std::string_view>;
    CHECK(ui::wrap_lines("0x0011E700 (1,173,248)", 14.0f, units) == Lines{"0x0011E700", "(1,173,248)"});
    CHECK(ui::wrap_lines("0x001CF780 \xE2\x80\x93 0x001D1280 (6,912 bytes)", 14.0f, units) ==
          Lines{"0x001CF780 \xE2\x80\x93", "0x001D1280", "(6,912 bytes)"});
    CHECK(ui::wrap_lines("32 elements in 18 bytes", 30.0f, units) == Lines{"32 elements in 18 bytes"});
    CHECK(ui::wrap_lines("", 10.0f, units).empty());
}

TEST_CASE("a word wider than the line is cut after a boundary, else between characters") {
    using Lines = std::vector<std::string_view>;
    CHECK(ui::wrap_lines("/models/blobs/sha256-abc", 10.0f, units) == Lines{"/models/", "blobs/", "sha256-abc"});
    CHECK(ui::wrap_lines("Supercalifragilistic", 8.0f, units) == Lines{"Supercal", "ifragili", "stic"});
    // Three-byte characters two units wide stay whole; a line holds at least one character.
    CHECK(ui::wrap_lines("\xE8\xAA\x9E\xE8\xAA\x9E\xE8\xAA\x9E", 5.0f, units) == Lines{"\xE8\xAA\x9E\xE8\xAA\x9E", "\xE8\xAA\x9E"});
    CHECK(ui::wrap_lines("ab", 0.5f, units) == Lines{"a", "b"});
}

TEST_CASE("with the app's font, an offset wraps before its byte count, never inside it") {
    test::HeadlessImGui imgui;
    imgui.frame([] {
        auto measure = [](std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; };
        const std::string offset = "0x0011E700 (1,173,248)";
        const float narrow = ImGui::CalcTextSize("0x0011E700 (1,17").x;
        CHECK(ui::wrap_lines(offset, narrow, measure) == std::vector<std::string_view>{"0x0011E700", "(1,173,248)"});
        CHECK(ui::wrap_lines(offset, measure(offset), measure) == std::vector<std::string_view>{offset});
    });
}
