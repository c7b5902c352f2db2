#include <catch2/catch.hpp>

#include "mlens/model/enum_names.h"
#include "state/display_text.h"

using namespace mlens;

namespace {

std::vector<std::pair<PieceSegmentKind, std::string>> flat(std::string_view piece, size_t max_chars = 120) {
    std::vector<std::pair<PieceSegmentKind, std::string>> out;
    for (const PieceSegment& s : visible_piece(piece, max_chars)) out.emplace_back(s.kind, s.text);
    return out;
}

}  // namespace

TEST_CASE("spaces, SentencePiece and byte-level markers become visible") {
    using K = PieceSegmentKind;
    CHECK(flat(" world") == decltype(flat("")){{K::space, "\xC2\xB7"}, {K::text, "world"}});
    CHECK(flat("\xE2\x96\x81the") == decltype(flat("")){{K::marker, "\xE2\x96\x81"}, {K::text, "the"}});
    CHECK(flat("\xC4\xA0world\xC4\x8A") == decltype(flat("")){{K::marker, "\xC4\xA0"}, {K::text, "world"}, {K::marker, "\xC4\x8A"}});
    CHECK(flat("  ") == decltype(flat("")){{K::space, "\xC2\xB7\xC2\xB7"}});
}

TEST_CASE("byte tokens, controls, bidi and invalid bytes are shown escaped") {
    using K = PieceSegmentKind;
    CHECK(flat("<0x0A>") == decltype(flat("")){{K::byte_token, "<0x0A>"}});
    CHECK(is_byte_token("<0xfe>"));
    CHECK_FALSE(is_byte_token("<0xZZ>"));
    CHECK(flat("\n\t\r\x01\x7F") == decltype(flat("")){{K::escape, "\\n\\t\\r\\x01\\x7F"}});
    CHECK(visible_piece_text("a\xE2\x80\xAE"
                             "b") == "a\\u202Eb");
    CHECK(visible_piece_text("\xFF\xFE") == "\\xFF\\xFE");
    CHECK(visible_piece_text("\xC2\x85") == "\\xC2\\x85");
    CHECK(visible_piece_text("").empty());
}

TEST_CASE("long pieces are cut with an ellipsis") {
    CHECK(visible_piece_text(std::string(300, 'a'), 10) == std::string(10, 'a') + "\xE2\x80\xA6");
    CHECK(visible_piece_text(std::string(10, ' '), 4) == "\xC2\xB7\xC2\xB7\xC2\xB7\xC2\xB7\xE2\x80\xA6");
    CHECK(visible_piece_text("abc", 3) == "abc");
}

TEST_CASE("multi-line text keeps its lines and escapes the rest") {
    CHECK(escape_multiline("a\r\nb\tc\n") == "a\nb    c\n");
    CHECK(escape_multiline("x\x1B[31m") == "x\\x1B[31m");
    CHECK(escape_multiline("abcdef", 3) == "abc\n\xE2\x80\xA6 (3 more bytes)");
}

TEST_CASE("enum-valued keys get their names") {
    auto u32 = [](uint32_t v) { return Scalar{ValueType::u32, v}; };
    CHECK(enum_value_name("general.file_type", u32(15)) == "Q4_K_M");
    CHECK(enum_value_name("bert.pooling_type", u32(2)) == "CLS");
    CHECK(enum_value_name("llama.rope.scaling.type", u32(2)) == "YARN");
    CHECK(enum_value_name("tokenizer.ggml.token_type", u32(6)) == "BYTE");
    CHECK_FALSE(enum_value_name("general.file_type", u32(9999)).has_value());
    CHECK_FALSE(enum_value_name("llama.context_length", u32(1)).has_value());
    CHECK_FALSE(enum_value_name("general.file_type", Scalar{ValueType::f32, 0}).has_value());
    CHECK(std::string(token_type_name(3)) == "CONTROL");
    CHECK(token_type_name(7) == nullptr);
}

TEST_CASE("byte-level BPE pieces are shown as the text they stand for") {
    using K = PieceSegmentKind;
    const auto shown = [](std::string_view piece) {
        std::vector<std::pair<PieceSegmentKind, std::string>> out;
        for (const PieceSegment& s : visible_piece(piece, 120, PieceEncoding::byte_level)) out.emplace_back(s.kind, s.text);
        return out;
    };
    CHECK(visible_piece_text("\xC3\xA6\xC2\xB3\xC4\xB7\xC3\xA6\xC2\xB2\xC2\xBB", 120, PieceEncoding::byte_level) == "\xE6\xB3\x95\xE6\xB2\xBB");
    CHECK(shown("\xC4\xA0the") == decltype(flat("")){{K::space, "\xC2\xB7"}, {K::text, "the"}});
    CHECK(shown("\xC4\x8A") == decltype(flat("")){{K::escape, "\\n"}});
    CHECK(shown("\xC3\xA6\xC2\xB3") == decltype(flat("")){{K::escape, "\\xE6\\xB3"}});  // half of 法
    // Not in the byte map: shown as stored, markers and all.
    CHECK(shown("\xE2\x96\x81the") == decltype(flat("")){{K::marker, "\xE2\x96\x81"}, {K::text, "the"}});
    // The same pieces in a plain vocabulary keep their markers.
    CHECK(flat("\xC4\xA0the") == decltype(flat("")){{K::marker, "\xC4\xA0"}, {K::text, "the"}});
}
