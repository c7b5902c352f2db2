// Large synthetic GGUF files for benchmarks: a vocabulary of up to millions of tokens and up to
// tens of thousands of tensor infos, written with GgufBuilder so the bytes are exactly known.
//
// Layout: general.architecture = "llama", tokenizer.ggml.model = "llama"; with tokens > 0 also
// tokenizer.ggml.tokens ("tok_0", "tok_1", ...), tokenizer.ggml.scores (0, -1, -2, ...) and, when
// asked, tokenizer.ggml.token_type (INT32: CONTROL for ids 0-2, NORMAL after). Tensor i is a 1-D
// F32 tensor of 8 elements named "blk.{i / 10}.w{i % 10}" at data offset 32 * i; the data is zeros.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlens::test {

struct LargeGguf {
    uint64_t tokens = 0;
    bool token_types = false;
    uint64_t tensors = 0;
};

std::vector<uint8_t> large_gguf_bytes(const LargeGguf& spec);
// Writes large_gguf_bytes(spec) to `path`; false on I/O failure.
bool write_large_gguf(const std::string& path, const LargeGguf& spec);

}  // namespace mlens::test
