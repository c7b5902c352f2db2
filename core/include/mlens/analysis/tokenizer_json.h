// A Hugging Face tokenizer.json read for what a GGUF vocabulary is compared with
// (tokenizer_parity.h): the model's tokens by id, its merges or scores, the added tokens, and
// the pieces around the model (normalizer, pre-tokenizer, post-processor) that decide how text
// reaches it. Tokenizing with it is Hugging Face's own library's work (hf_tokenizer.h).
//
// Contract:
//  - read_tokenizer_json reads at most kMaxTokenizerJsonBytes (E_TOO_LARGE beyond; anything but
//    a regular file: E_NOT_REGULAR); a file that is not JSON, or whose "model" is not an object
//    with a "type" (or "vocab" for files without one), is E_INVALID naming the field.
//  - tokens[id] is the token string of id: model.vocab (BPE, WordPiece, WordLevel: token → id;
//    Unigram: [[piece, score], ...] in id order) and added_tokens (each with its id); an id held
//    by neither stays nullopt. An id is refused (E_INVALID) when it is negative or not
//    below the file's size in bytes, which bounds the table by the bytes the file holds. Two
//    strings for one id: the added token wins, as in the library.
//  - scores: Unigram's, by id (empty for other models).
//  - merges: model.merges in file order, either form the library writes ("a b" or ["a", "b"]);
//    a "a b" string splits at its first space.
//  - pre_tokenizer: its types in order, a Sequence flattened ("Split", "ByteLevel", ...), and
//    every Split pattern (its "Regex" or "String") in split_patterns; normalizer likewise.
//  - post_prefix / post_suffix: the special tokens the post-processor puts before and after a
//    single sequence (TemplateProcessing's "single", also inside a Sequence; RobertaProcessing
//    and BertProcessing's cls/sep), as (content, id). Empty when there is no post-processor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/result.h"

namespace mlens {

inline constexpr uint64_t kMaxTokenizerJsonBytes = 512ull << 20;

struct TokenizerJsonAdded {
    int64_t id = 0;
    std::string content;
    bool special = false;
    bool normalized = false;
};

struct TokenizerJsonSpecial {
    std::string content;
    int64_t id = 0;
};

struct TokenizerJson {
    std::string path;
    std::string model_type;  // "BPE", "Unigram", "WordPiece", "WordLevel"
    std::vector<std::optional<std::string>> tokens;  // by id
    std::vector<double> scores;  // Unigram, by id
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<TokenizerJsonAdded> added;
    bool byte_fallback = false;
    std::optional<std::string> unk_token;
    std::vector<std::string> pre_tokenizer;  // types in order
    std::vector<std::string> split_patterns;
    std::vector<std::string> normalizer;  // types in order
    std::vector<TokenizerJsonSpecial> post_prefix, post_suffix;

    uint64_t vocab_count() const;  // ids that hold a token
    const TokenizerJsonAdded* added_token(int64_t id) const;
};

Result<TokenizerJson> read_tokenizer_json(const std::string& path);

}  // namespace mlens
