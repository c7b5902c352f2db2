// A GGUF vocabulary against a Hugging Face tokenizer.json: what llama.cpp will tokenize with,
// compared with what transformers will, item by item, so that "why do the two runtimes give
// different tokens" has an answer with an id in it.
//
// Contract:
//  - compare_tokenizers lists every difference, each with its kind and, where one applies, the
//    token id (or merge rank); `total` counts them by kind, and at most kMaxListedPerKind of each
//    kind are kept in `differences` (in id order), so a wholly different pair stays readable.
//  - model: tokenizer.ggml.model against the model type the converter derives from the JSON
//    (BPE with a ByteLevel pre-tokenizer → "gpt2"; BPE with byte_fallback → "llama"; Unigram →
//    "t5"; WordPiece → "bert"); a type none of these cover is not compared.
//  - token: token strings by id, as stored on both sides (a byte-level vocabulary stores the
//    same "Ġthe" in both). token_missing: an id one side has and the other lacks — except the
//    converter's padding: a GGUF token "[PAD<id>]" of type UNUSED where the JSON has no id.
//  - token_type: an added token is CONTROL when the JSON marks it special or it looks special
//    as the converter judges ("<|...|>", "<pad>", "<mask>", "<2mass>", "[@BOS@]"), USER_DEFINED
//    otherwise; a GGUF CONTROL or USER_DEFINED token that the JSON does not add is a difference.
//  - merge: merges compared as sets (each one missing from a side, with its rank there); when
//    the sets agree, the first rank at which the order differs.
//  - score: a Unigram score differing from tokenizer.ggml.scores as float.
//  - special: BOS/EOS as the post-processor adds them (post_prefix/post_suffix) against
//    tokenizer.ggml.add_bos_token / add_eos_token and bos/eos_token_id, compared only where the
//    GGUF states the key.
//  - pre_tokenizer: for a "gpt2" vocabulary, `check_ids` are the ids Hugging Face's library gives
//    for llama_pre_check_text() with special tokens (transformers' encode); their sha256 is looked
//    up in the pinned converter's table (llama_pre_hashes.h). A GGUF tokenizer.ggml.pre that is
//    not a name of that hash is a difference; so is a hash the converter does not know (it would
//    refuse to convert). Without check_ids the pre-tokenizer is not compared (`pre_checked`
//    false).
//  - A GGUF without tokenizer.ggml.tokens is compared as an empty vocabulary.
//  - check_tokenizer_parity is the whole structural check of a file pair: it reads the
//    tokenizer.json (read_tokenizer_json's errors), asks Hugging Face's library for the check ids
//    (hf_tokenizer.h) and compares. When the library cannot be asked (its helper missing) or
//    refuses the file, the pre-tokenizer is left uncompared and `pre_note` says why; any other
//    difference is still listed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/analysis/tokenizer_json.h"
#include "mlens/model/model.h"

namespace mlens {

enum class ParityKind { model, pre_tokenizer, token, token_missing, token_type, merge, score, special };
inline constexpr size_t kParityKinds = 8;
const char* parity_kind_name(ParityKind k);  // "model", "pre_tokenizer", ...

inline constexpr size_t kMaxListedPerKind = 1000;

struct ParityDifference {
    ParityKind kind = ParityKind::token;
    std::optional<int64_t> id;  // token id, or merge rank
    std::string gguf;  // the GGUF's side, as stored ("" when it has none)
    std::string json;  // tokenizer.json's side
    std::string message;
};

struct TokenizerParity {
    std::string gguf_model, gguf_pre;  // tokenizer.ggml.model, tokenizer.ggml.pre
    std::string json_model;  // tokenizer.json model.type
    std::string expected_model;  // the GGUF model name the JSON implies ("" when none)
    bool pre_checked = false;
    std::string pre_hash;  // sha256 of the check ids
    std::vector<std::string> pre_names;  // the converter's names for pre_hash (last: what it writes)
    uint64_t gguf_tokens = 0, json_tokens = 0, gguf_merges = 0, json_merges = 0, json_added = 0;
    std::array<uint64_t, kParityKinds> total{};
    std::vector<ParityDifference> differences;

    uint64_t difference_count() const;
};

std::string_view llama_pre_check_text();

TokenizerParity compare_tokenizers(const Model& gguf, const TokenizerJson& json, const std::optional<std::vector<int32_t>>& check_ids);

struct TokenizerParityCheck {
    TokenizerJson json;
    TokenizerParity parity;
    std::string library;  // "tokenizers 0.23.2" when it was asked
    std::string pre_note;  // why the pre-tokenizer was not compared ("" when it was, or needs not be)
};

Result<TokenizerParityCheck> check_tokenizer_parity(const Model& gguf, const std::string& tokenizer_json_path);

}  // namespace mlens
