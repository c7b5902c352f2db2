#include "mlens/infer/tokenizer.h"

#include <llama.h>

#include <climits>

namespace mlens {

namespace {

std::string piece_of(const llama_vocab* vocab, int32_t id) {
    std::string buf(32, '\0');
    int32_t n = llama_token_to_piece(vocab, id, buf.data(), static_cast<int32_t>(buf.size()), 0, true);
    if (n < 0) {
        buf.assign(static_cast<size_t>(-n), '\0');
        n = llama_token_to_piece(vocab, id, buf.data(), static_cast<int32_t>(buf.size()), 0, true);
        if (n < 0) return {};
    }
    buf.resize(static_cast<size_t>(n));
    return buf;
}

bool valid_id(const Session& session, int32_t id) { return id >= 0 && id < session.facts().n_vocab; }

}  // namespace

Result<std::vector<int32_t>> tokenize_ids(const Session& session, std::string_view text, const TokenizeOptions& options) {
    if (text.size() > static_cast<size_t>(INT32_MAX / 2))
        return Error{ErrorCode::E_TOO_LARGE, "", std::nullopt, "text of " + std::to_string(text.size()) + " bytes is too long"};
    LogScope scope(&session.log());
    const auto len = static_cast<int32_t>(text.size());
    std::vector<int32_t> ids(text.size() + 4);
    int32_t n = llama_tokenize(session.vocab(), text.data(), len, ids.data(), static_cast<int32_t>(ids.size()), options.add_special,
                               options.parse_special);
    if (n == INT32_MIN) return Error{ErrorCode::E_TOO_LARGE, "", std::nullopt, "the token count overflows int32"};
    if (n < 0) {
        ids.resize(static_cast<size_t>(-n));
        n = llama_tokenize(session.vocab(), text.data(), len, ids.data(), static_cast<int32_t>(ids.size()), options.add_special,
                           options.parse_special);
        if (n < 0) return Error{ErrorCode::E_TOKENIZE, "", std::nullopt, "llama_tokenize failed"};
    }
    ids.resize(static_cast<size_t>(n));
    return ids;
}

Result<TokenPiece> token_piece(const Session& session, int32_t id) {
    if (!valid_id(session, id))
        return Error{ErrorCode::E_TOKEN_ID, "", std::nullopt,
                     "token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(session.facts().n_vocab)};
    return TokenPiece{id, piece_of(session.vocab(), id), llama_vocab_is_control(session.vocab(), id), llama_vocab_is_eog(session.vocab(), id)};
}

std::vector<TokenPiece> token_pieces(const Session& session, std::span<const int32_t> ids) {
    std::vector<TokenPiece> out;
    out.reserve(ids.size());
    for (int32_t id : ids) {
        auto piece = token_piece(session, id);
        out.push_back(piece ? std::move(*piece) : TokenPiece{id, {}, false});
    }
    return out;
}

Result<std::vector<TokenPiece>> tokenize(const Session& session, std::string_view text, const TokenizeOptions& options) {
    auto ids = tokenize_ids(session, text, options);
    if (!ids) return ids.error();
    return token_pieces(session, *ids);
}

Result<std::string> detokenize(const Session& session, std::span<const int32_t> ids, bool remove_special, bool unparse_special) {
    for (int32_t id : ids)
        if (!valid_id(session, id)) return token_piece(session, id).error();
    LogScope scope(&session.log());
    const auto n_ids = static_cast<int32_t>(ids.size());
    std::string text(ids.size() * 8 + 16, '\0');
    int32_t n = llama_detokenize(session.vocab(), ids.data(), n_ids, text.data(), static_cast<int32_t>(text.size()), remove_special,
                                 unparse_special);
    if (n < 0) {
        text.assign(static_cast<size_t>(-n), '\0');
        n = llama_detokenize(session.vocab(), ids.data(), n_ids, text.data(), static_cast<int32_t>(text.size()), remove_special,
                             unparse_special);
        if (n < 0) return Error{ErrorCode::E_DETOKENIZE, "", std::nullopt, "llama_detokenize failed"};
    }
    text.resize(static_cast<size_t>(n));
    return text;
}

std::vector<ChatMessage> sample_conversation() {
    return {{"system", "You are a helpful assistant."},
            {"user", "Hello!"},
            {"assistant", "Hi! How can I help?"},
            {"user", "What is in a GGUF file?"}};
}

Result<ChatRender> apply_chat_template(const Session& session, const std::vector<ChatMessage>& messages, bool add_assistant_prefix,
                                       const std::string& template_text) {
    const char* tmpl = template_text.empty() ? llama_model_chat_template(session.model(), nullptr) : template_text.c_str();
    if (!tmpl) return Error{ErrorCode::E_NO_TEMPLATE, "tokenizer.chat_template", std::nullopt, "the file has no chat template"};
    std::vector<llama_chat_message> chat;
    size_t total = 0;
    for (const ChatMessage& m : messages) {
        chat.push_back({m.role.c_str(), m.content.c_str()});
        total += m.role.size() + m.content.size();
    }
    ChatRender render;
    render.template_source = tmpl;
    std::string buf(total * 2 + 256, '\0');
    int32_t n =
        llama_chat_apply_template(tmpl, chat.data(), chat.size(), add_assistant_prefix, buf.data(), static_cast<int32_t>(buf.size()));
    if (n > static_cast<int32_t>(buf.size())) {
        buf.assign(static_cast<size_t>(n), '\0');
        n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), add_assistant_prefix, buf.data(), static_cast<int32_t>(buf.size()));
    }
    if (n < 0)
        return Error{ErrorCode::E_TEMPLATE, "tokenizer.chat_template", std::nullopt,
                     "llama.cpp does not recognise this chat template (llama_chat_apply_template returned " + std::to_string(n) + ")"};
    buf.resize(static_cast<size_t>(n));
    render.prompt = std::move(buf);

    TokenizeOptions options;
    options.parse_special = true;
    options.add_special = true;
    const ModelFacts& facts = session.facts();
    if (facts.add_bos && facts.bos >= 0) {
        auto bos = token_piece(session, facts.bos);
        if (bos && !bos->piece.empty() && render.prompt.starts_with(bos->piece)) options.add_special = false;
    }
    auto tokens = tokenize(session, render.prompt, options);
    if (!tokens) return tokens.error();
    render.tokens = std::move(*tokens);
    return render;
}

}  // namespace mlens
