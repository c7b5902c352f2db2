// Byte-level BPE pieces made readable: GPT-2's tokenizer, and every vocabulary built like it
// (tokenizer.ggml.model "gpt2": GPT-2, Llama 3, Qwen2, ...), stores each byte of a piece's text
// as one code point — the printable Latin-1 bytes (! to ~, ¡ to ¬, ® to ÿ) as themselves, the
// other 68 bytes as U+0100 + n in ascending byte order (space → U+0120 'Ġ', LF → U+010A 'Ċ').
// "æ³ķæ²»" is stored for the text "法治", "Ġthe" for " the".
//
// Contract:
//  - byte_level_decode gives the bytes a stored piece stands for when every code point of it is
//    in the map (the empty piece included); nullopt otherwise (invalid UTF-8, or a character the
//    map never produces): such a piece is shown as stored. The bytes may end inside a UTF-8
//    sequence (one character split over two tokens); readers escape what is not valid.
//  - byte_level_encode is the inverse: byte_level_decode(byte_level_encode(b)) == b for any bytes.
//  - piece_encoding decides from tokenizer.ggml.model, as llama.cpp does: "gpt2" is byte-level
//    (llama.cpp's BPE vocabularies decode it in token_to_piece); every other model ("llama" with
//    its ▁ and <0xNN> pieces, "bert", "t5", ...) is plain.
//  - A byte-level vocabulary's CONTROL and USER_DEFINED tokens are copied as stored by
//    llama.cpp; token_piece_encoding says so for one token type (decided: UNUSED, UNKNOWN and a
//    missing type are decoded like NORMAL ones, as llama.cpp's normal path would).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlens {

enum class PieceEncoding { plain, byte_level };

std::optional<std::string> byte_level_decode(std::string_view piece);
std::string byte_level_encode(std::string_view bytes);

PieceEncoding piece_encoding(std::string_view tokenizer_model);
// `token_type` is the tokenizer.ggml.token_type value (llama_token_type), nullopt when absent.
PieceEncoding token_piece_encoding(PieceEncoding vocabulary, std::optional<int64_t> token_type);

}  // namespace mlens
