// Text tokenized by Hugging Face's tokenizers library reading a tokenizer.json, through the helper
// program mlens-tokenizer-json (app/tokenizer_json: the library's Node binding, installed by
// third_party/setup.sh), so that what a tokenizer.json means is the library's answer, not a
// reading of the file written here.
//
// Contract:
//  - hf_encode(tokenizer_json, texts, add_special_tokens) returns one encoding per text, in order:
//    the ids, and each token's [start, end) byte offsets into that text as the library reports
//    them (a token the post-processor adds covers no bytes: [0, 0]). add_special_tokens is
//    transformers' `encode(..., add_special_tokens=)`: the post-processor's BOS/EOS.
//  - Texts must be valid UTF-8 (the library takes strings): E_INVALID_UTF8 naming the byte
//    offset of the first invalid sequence otherwise.
//  - A tokenizer.json the library refuses is E_INVALID with the library's message; the
//    helper not found is E_NO_WORKER ("mlens-tokenizer-json ... was not found"); a helper that
//    runs past 120 s is killed (E_TOKENIZE saying so). `library` names the library and version.
//  - The helper is found as MLENS_TOKENIZER_JSON (environment), beside the running program, or
//    through program_files.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlens/result.h"

namespace mlens {

struct HfEncoding {
    std::vector<int32_t> ids;
    std::vector<std::pair<uint64_t, uint64_t>> offsets;
};

struct HfEncodings {
    std::string library;  // "tokenizers 0.23.2"
    uint64_t vocab_size = 0;  // with added tokens
    std::vector<HfEncoding> encodings;
};

Result<HfEncodings> hf_encode(const std::string& tokenizer_json, const std::vector<std::string>& texts, bool add_special_tokens);

// The path of mlens-tokenizer-json, empty when it is not found.
std::string hf_tokenizer_helper();

}  // namespace mlens
