// One text tokenized by llama.cpp (the GGUF, in its worker) and by Hugging Face's tokenizers
// (the tokenizer.json, hf_tokenizer.h), compared id by id: the second half of tokenizer-parity.
//
// Contract:
//  - Both sides tokenize without adding BOS/EOS (llama_tokenize add_special false; the library's
//    add_special_tokens false), and both read special tokens written in the text as themselves
//    (llama.cpp parse_special true; the library always matches added tokens): what differs is
//    then the vocabulary, the pre-tokenizer and the model, not the post-processor, which
//    compare_tokenizers covers.
//  - equal when the id sequences are the same. Otherwise first_token is the index of the first
//    differing id, first_byte the byte offset in the text where the token there starts, as the
//    library reports it (the text's end when the library's ids ran out), and `context` holds up
//    to kParityContextTokens tokens of each side from a few tokens before it: id and piece
//    (llama.cpp's piece bytes; the tokenizer.json's token string as stored).
//  - The text must be valid UTF-8 (E_INVALID_UTF8, from hf_encode). Cancel through job.
//  - compare_text_tokenization_of loads `model_path` (any text open/target.h resolves)
//    vocabulary-only in a worker of its own (WorkerSession::load's errors, about the model) and
//    compares there: what `mlens tokenizer-parity --text` and the app's Parity view run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/tokenizer_json.h"
#include "mlens/infer/worker_session.h"
#include "mlens/job.h"

namespace mlens {

inline constexpr size_t kParityContextTokens = 12;

struct ParityToken {
    int32_t id = 0;
    std::string piece;
};

struct TextTokenParity {
    uint64_t text_bytes = 0;
    uint64_t llama_count = 0, hf_count = 0;
    bool equal = false;
    std::optional<uint64_t> first_token;
    std::optional<uint64_t> first_byte;
    uint64_t context_start = 0;  // token index of the context's first token
    std::vector<ParityToken> llama_context, hf_context;
    std::string library;  // "tokenizers 0.23.2"
};

Result<TextTokenParity> compare_text_tokenization(WorkerSession& session, const TokenizerJson& json, const std::string& text,
                                                  JobContext* job = nullptr);
Result<TextTokenParity> compare_text_tokenization_of(const std::string& model_path, const TokenizerJson& json, const std::string& text,
                                                     uint32_t worker_timeout_s, JobContext* job = nullptr);

}  // namespace mlens
