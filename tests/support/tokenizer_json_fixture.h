// tokenizer.json files written from a GGUF vocabulary, for the tokenizer-parity tests: the file a
// Hugging Face repository would hold beside the model llama.cpp's converter made the GGUF from,
// so that the pair matches, and then changed on purpose. Also the mixed-script text the two
// tokenizers are run on.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "mlens/model/model.h"

namespace mlens::test {

// The pre-tokenizer regex of Llama 3's tokenizer.json (tokenizer.ggml.pre "llama-bpe").
extern const char* const kLlama3PreTokenizerRegex;

// A byte-level BPE tokenizer.json for a "gpt2" GGUF: tokens of type CONTROL / USER_DEFINED become
// added_tokens (special when CONTROL), all others model.vocab; merges as the GGUF lists them;
// the pre-tokenizer Split(`split_regex`, Isolated) then ByteLevel; the BPE model with
// ignore_merges as llama-bpe; a TemplateProcessing post-processor putting tokenizer.ggml.bos_token_id
// before the text unless add_bos_token says false (llama.cpp adds BOS for llama-bpe by default).
nlohmann::json byte_level_tokenizer_json(const Model& gguf, const std::string& split_regex);

// The differences the parity tests plant in a byte_level_tokenizer_json: the tokens of ids 1000
// and 1001 swapped (every string still there, so the library still reads the merges), the merge
// of rank 5 dropped, id 300 also listed among the
// added tokens as special (the GGUF keeps it NORMAL), and the post-processor removed (no BOS).
struct PlantedDifferences {
    std::string token_1000, token_1001;  // the original strings
    std::string dropped;  // the merge of rank 5
};
PlantedDifferences plant_differences(nlohmann::json& tokenizer_json);

void write_json_file(const std::string& path, const nlohmann::json& j);

// About `bytes` bytes (cut at a character boundary) of text mixing English, code, numbers,
// whitespace runs, CJK, Cyrillic, Greek, Arabic, Devanagari, Thai, Hangul and emoji, drawn with a
// fixed seed.
std::string mixed_script_text(size_t bytes, uint64_t seed = 7);

}  // namespace mlens::test
