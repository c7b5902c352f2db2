// The pinned llama.cpp converter's pre-tokenizer fingerprints, generated at build time from its
// source (third_party/llama_requirements/generate_llama_pre_hashes.py): the text it tokenizes
// with a Hugging Face tokenizer, and, for each sha256 of the printed id list ("[1, 2, 3]"), the
// tokenizer.ggml.pre name it writes, in the converter's order. A hash may appear more than once
// under different names (mpt and olmo tokenize the text alike): the converter's chain of ifs
// writes the last of them.
#pragma once

#include <cstddef>
#include <string_view>

namespace mlens {

struct LlamaPreHash {
    const char* sha256;
    const char* name;
};

extern const std::string_view kLlamaPreCheckText;
extern const LlamaPreHash kLlamaPreHashes[];
extern const size_t kLlamaPreHashCount;

}  // namespace mlens
