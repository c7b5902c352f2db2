// Tiny models that upstream llama.cpp runs, each in two layouts from the same weights: as an
// Ollama-made GGUF (the layout Ollama's compatibility shim rewrites, keys in the order Ollama's
// writer sorts them) and as llama.cpp's own converter would write it. Export round-trip tests
// export the first and compare logits with the second. Weights are deterministic (test_signal); norms sit near 1.
//
//  - llama3: llama arch, Llama-3 BPE vocabulary (models/ggml-vocab-llama-bpe.gguf, 128256 tokens),
//    1 block, n_embd 32, 4 heads / 2 KV heads, tied output. Ollama layout: no tokenizer.ggml.pre
//    and eos 128001 (the metadata gap handle_llama3_metadata fills).
//  - gemma3: gemma3 text, SentencePiece vocabulary (ggml-vocab-llama-spm.gguf, 32000 tokens),
//    1 block, n_embd 32, 2 heads / 1 KV head of 16. Ollama layout: no rms-eps / rope KVs, four extra
//    image tokens in the tokenizer arrays, and v.* / mm.* vision tensors in the same file.
//  - lfm2: lfm2 arch, Llama-3 BPE vocabulary, 2 blocks (a short-convolution block, then an
//    attention block: head_count_kv is the per-layer array [0, 2]), n_embd 32, untied-free (the
//    output reuses token_embd). Ollama layout: the final norm named output_norm.weight, no
//    tokenizer.ggml.pre, and lfm2.feed_forward_length 96 where the FFN is 64 wide (what
//    handle_lfm2 rewrites).
//  - gptoss: gpt-oss MoE, Llama-3 BPE vocabulary, 2 blocks (sliding window, then full), n_embd 32,
//    4 heads / 2 KV heads of 8, 4 experts (2 used) of width 32 with biases, attention sinks.
//    Ollama layout: arch "gptoss" with gptoss.* keys, the names attn_out, attn_sinks (no .weight)
//    and ffn_norm, no expert_feed_forward_length, rope.scaling.type or "gpt-4o" pre-tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::test {

struct TinyTensor {
    std::string name;
    uint32_t ggml_type = 0;
    std::vector<uint64_t> ne;
    std::vector<float> values;
};

struct TinyModel {
    std::vector<MetadataEntry> metadata;
    std::vector<TinyTensor> tensors;
    std::vector<int32_t> prompt;  // tokens the round-trip test decodes
};

enum class TinyLayout { ollama, upstream };

TinyModel tiny_llama3(TinyLayout layout);
TinyModel tiny_gemma3(TinyLayout layout);
TinyModel tiny_lfm2(TinyLayout layout);
TinyModel tiny_gptoss(TinyLayout layout);

// Writes a TinyModel through our GGUF writer (values converted with ggml's quantizer).
void write_tiny_model(const TinyModel& model, const std::string& path);

}  // namespace mlens::test
