// Runs a GGUF through the pinned llama.cpp and returns the logits of a fixed token sequence, for
// round-trip tests that must show two files compute the same thing.
#pragma once

#include <llama.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mlens::test {

struct LlamaLogits {
    std::string error;  // empty on success: why the model did not load or decode
    int32_t n_vocab = 0;
    std::vector<float> logits;  // tokens.size() rows of n_vocab, row i = logits after token i
};

// llama.cpp's default context parameters with a context and batch of `n_ctx` tokens, decoded with
// `n_threads` threads.
llama_context_params context_params(uint32_t n_ctx, int32_t n_threads);

// Loads `path` on the CPU (one thread, so results are deterministic), decodes `tokens` in one
// batch with logits for every position, frees everything.
LlamaLogits llama_logits(const std::string& path, const std::vector<int32_t>& tokens);

// Largest absolute element-wise difference; infinity when the sizes differ or either is empty.
float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace mlens::test
