// Byte-level BPE pieces decoded to the text they stand for, and the vocabularies that store them.
#include <catch2/catch.hpp>

#include <string>

#include "mlens/text/byte_level_bpe.h"

using namespace mlens;

TEST_CASE("byte-level pieces decode to their text", "[byte_level_bpe]") {
    CHECK(byte_level_decode("\xC3\xA6\xC2\xB3\xC4\xB7\xC3\xA6\xC2\xB2\xC2\xBB") == "\xE6\xB3\x95\xE6\xB2\xBB");  // "æ³ķæ²»" → "法治"
    CHECK(byte_level_decode("\xC4\xA0the") == " the");  // "Ġthe"
    CHECK(byte_level_decode("\xC4\x8A\xC4\x8A") == "\n\n");  // "ĊĊ"
    CHECK(byte_level_decode("\xC4\x89") == "\t");  // "ĉ"
    CHECK(byte_level_decode("<|im_start|>") == "<|im_start|>");
    CHECK(byte_level_decode("") == "");
    CHECK(byte_level_decode("\xC5\x83") == std::string("\xAD"));  // U+0143 'Ń': the soft hyphen, the last shifted byte
    CHECK(byte_level_decode("\xC3\xA6\xC2\xB3") == "\xE6\xB3");  // half a character: the bytes as they are
}

TEST_CASE("pieces outside the byte map are not byte-level text", "[byte_level_bpe]") {
    CHECK_FALSE(byte_level_decode("a b"));  // a raw space is never produced
    CHECK_FALSE(byte_level_decode("\xE2\x96\x81the"));  // SentencePiece '▁'
    CHECK_FALSE(byte_level_decode("\xC5\x84"));  // U+0144, past the 68 shifted bytes
    CHECK_FALSE(byte_level_decode("\xFF"));  // invalid UTF-8
}

TEST_CASE("encoding is the inverse of decoding for every byte", "[byte_level_bpe]") {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    CHECK(byte_level_encode(" ") == "\xC4\xA0");
    CHECK(byte_level_encode("\xE6\xB3\x95") == "\xC3\xA6\xC2\xB3\xC4\xB7");
    CHECK(byte_level_decode(byte_level_encode(all)) == all);
}

TEST_CASE("gpt2 vocabularies are byte-level, their control and user-defined tokens are not", "[byte_level_bpe]") {
    CHECK(piece_encoding("gpt2") == PieceEncoding::byte_level);
    CHECK(piece_encoding("llama") == PieceEncoding::plain);
    CHECK(piece_encoding("bert") == PieceEncoding::plain);
    CHECK(token_piece_encoding(PieceEncoding::byte_level, 1) == PieceEncoding::byte_level);
    CHECK(token_piece_encoding(PieceEncoding::byte_level, std::nullopt) == PieceEncoding::byte_level);
    CHECK(token_piece_encoding(PieceEncoding::byte_level, 3) == PieceEncoding::plain);
    CHECK(token_piece_encoding(PieceEncoding::byte_level, 4) == PieceEncoding::plain);
    CHECK(token_piece_encoding(PieceEncoding::plain, 1) == PieceEncoding::plain);
}
