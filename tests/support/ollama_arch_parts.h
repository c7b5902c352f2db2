// The pieces the tiny Ollama-made models of ollama_arch_models.h are built from: their common
// dimensions, a 264-token SentencePiece vocabulary of our own, the keys and tensors most of them
// share, and the Qwen vision tower; and the recurrent hybrids (ollama_hybrid_models.cpp).
#pragma once

#include <string>
#include <vector>

#include "ollama_arch_models.h"

namespace mlens::test::ollama_parts {

// n_embd, query heads and their width, KV heads, FFN width.
inline constexpr uint64_t kEmbd = 32, kHeads = 4, kHeadDim = 8, kKvHeads = 2, kFf = 64;
inline constexpr uint64_t kQ = kHeads * kHeadDim, kKv = kKvHeads * kHeadDim;
inline constexpr uint64_t kVocab = 3 + 256 + 5;  // tiny_vocabulary without extra tokens

// "<unk>", "<s>", "</s>", the 256 byte tokens, five words, then `extra` more.
OllamaGguf& tiny_vocabulary(OllamaGguf& g, int extra = 0);
std::string blk(int i);  // "blk.<i>."
// The keys every architecture here reads, under prefix `p` (the architecture and a dot);
// head_count_kv is `kv_heads` (a scalar, or Ollama's per-layer array).
OllamaGguf& base_keys(OllamaGguf& g, const std::string& p, uint32_t blocks, Value kv_heads = Value::of_u32(kKvHeads));
// token_embd, output_norm (or `norm_name`) and, unless tied, output.
OllamaGguf& embeddings(OllamaGguf& g, bool tied = false, const std::string& norm_name = "output_norm.weight");
// Q, K, V and the output projection (named `out`) of block prefix `b`, K and V `kv` wide.
OllamaGguf& attention(OllamaGguf& g, const std::string& b, const std::string& out = "attn_output", uint64_t kv = kKv);
OllamaGguf& dense_ffn(OllamaGguf& g, const std::string& b, uint64_t ff = kFf);
OllamaGguf& expert_ffn(OllamaGguf& g, const std::string& b, uint64_t experts, uint64_t ff);
OllamaGguf& shared_expert_ffn(OllamaGguf& g, const std::string& b, uint64_t ff);
// Vision block 0 (v.blk.0.): attention with K and V as wide as Q and the output named `out`, and
// a gated FFN.
OllamaGguf& vision_block(OllamaGguf& g, const std::string& out);
// The vision keys of qwen_vision_tower under prefix `p`: one block, patches of 16, 2x2 merge.
OllamaGguf& qwen_vision_keys(OllamaGguf& g, const std::string& p);
// The Qwen3-VL / Qwen3.5 vision tower as Ollama writes it: Q/K/V split (with biases), the patch
// embedding packed 4-D [W, H, T, C_out*C_in], the merger, and with `deepstack` one deepstack merger.
OllamaGguf& qwen_vision_tower(OllamaGguf& g, bool deepstack);

// qwen3next, qwen35, qwen35moe, nemotron_h_omni, nemotron_h_moe.
std::vector<OllamaArchModel> hybrid_models();

}  // namespace mlens::test::ollama_parts
