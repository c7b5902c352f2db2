#include "mlens/text/byte_level_bpe.h"

#include <array>

#include "mlens/text/utf8.h"

namespace mlens {

namespace {

bool printable(uint32_t b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct ByteMap {
    std::array<uint32_t, 256> code_point{};  // byte → code point
    std::array<int16_t, 0x100 + 68> byte{};  // code point → byte, -1 when the map never produces it
};

ByteMap make_byte_map() {
    ByteMap m;
    m.byte.fill(-1);
    uint32_t shifted = 0;
    for (uint32_t b = 0; b < 256; ++b) {
        m.code_point[b] = printable(b) ? b : 0x100 + shifted++;
        m.byte[m.code_point[b]] = static_cast<int16_t>(b);
    }
    return m;
}

const ByteMap& byte_map() {
    static const ByteMap m = make_byte_map();
    return m;
}

constexpr int64_t kTokenTypeControl = 3;
constexpr int64_t kTokenTypeUserDefined = 4;

}  // namespace

std::optional<std::string> byte_level_decode(std::string_view piece) {
    const ByteMap& m = byte_map();
    std::string out;
    out.reserve(piece.size());
    for (size_t i = 0; i < piece.size();) {
        uint32_t cp = 0;
        const size_t len = utf8_decode(piece.substr(i), cp);
        if (len == 0 || cp >= m.byte.size() || m.byte[cp] < 0) return std::nullopt;
        out += static_cast<char>(m.byte[cp]);
        i += len;
    }
    return out;
}

std::string byte_level_encode(std::string_view bytes) {
    const ByteMap& m = byte_map();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) append_utf8(out, m.code_point[b]);
    return out;
}

PieceEncoding piece_encoding(std::string_view tokenizer_model) {
    return tokenizer_model == "gpt2" ? PieceEncoding::byte_level : PieceEncoding::plain;
}

PieceEncoding token_piece_encoding(PieceEncoding vocabulary, std::optional<int64_t> token_type) {
    if (token_type == kTokenTypeControl || token_type == kTokenTypeUserDefined) return PieceEncoding::plain;
    return vocabulary;
}

}  // namespace mlens
