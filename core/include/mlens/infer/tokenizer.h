// Tokenizer tester over llama.cpp's own tokenizer: text -> tokens, tokens -> text, and the
// file's chat template rendered by llama_chat_apply_template.
//
// Contract:
//  - add_special asks llama.cpp to add BOS/EOS as the model's tokenizer config says
//    (llama_tokenize add_special); parse_special lets control tokens written in the text
//    ("<|im_start|>") become one token instead of plain text. Both match llama_tokenize.
//  - A TokenPiece's `piece` is llama_token_to_piece with special tokens rendered: raw bytes
//    (a byte-fallback token may be a lone byte of a UTF-8 sequence). Views make it visible.
//  - apply_chat_template uses the template stored in the file (tokenizer.chat_template); a
//    file without one, or with a template llama.cpp does not recognise, gets ErrorCode::E_NO_TEMPLATE /
//    ErrorCode::E_TEMPLATE. The rendered prompt is tokenized with parse_special; BOS is added by the
//    tokenizer only when the model asks for it and the rendered text does not already start
//    with the BOS token's text (templates that write BOS themselves would otherwise get two).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"

namespace mlens {

struct TokenizeOptions {
    bool add_special = true;
    bool parse_special = true;
};

struct TokenPiece {
    int32_t id = 0;
    std::string piece;  // bytes, special tokens rendered
    bool control = false;  // a control/special token (llama_vocab_is_control)
    bool eog = false;  // the model stops generating on it (llama_vocab_is_eog)
};

Result<std::vector<int32_t>> tokenize_ids(const Session& session, std::string_view text, const TokenizeOptions& options);
Result<std::vector<TokenPiece>> tokenize(const Session& session, std::string_view text, const TokenizeOptions& options);
// Ids outside the vocabulary get ErrorCode::E_TOKEN_ID.
Result<TokenPiece> token_piece(const Session& session, int32_t id);
std::vector<TokenPiece> token_pieces(const Session& session, std::span<const int32_t> ids);
// llama_detokenize; remove_special drops BOS/EOS as configured, unparse_special renders
// control tokens as their text.
Result<std::string> detokenize(const Session& session, std::span<const int32_t> ids, bool remove_special = false,
                               bool unparse_special = true);

struct ChatMessage {
    std::string role;
    std::string content;
};

// The small conversation the tester renders: system, user, assistant, user.
std::vector<ChatMessage> sample_conversation();

struct ChatRender {
    std::string template_source;  // the template rendered: the file's, or the one given
    std::string prompt;  // rendered by llama.cpp
    std::vector<TokenPiece> tokens;  // the prompt tokenized as described above
};

// `template_text`, when not empty, is rendered instead of the file's template (a template being
// edited, before it is written); it is llama_chat_apply_template's, so the same templates work.
Result<ChatRender> apply_chat_template(const Session& session, const std::vector<ChatMessage>& messages, bool add_assistant_prefix = true,
                                       const std::string& template_text = {});

}  // namespace mlens
