// The first lines people look for in a model: how long a context, how wide, how deep, how many
// heads, how large a vocabulary, whether it carries a chat template, and whether Ollama made it.
// `mlens info` and the app's Inspector show the same rows (overview_rows), computed here once.
//
// Contract:
//  - GGUF: ARCH.context_length, ARCH.embedding_length, ARCH.block_count,
//    ARCH.attention.head_count and .head_count_kv (ARCH = general.architecture; a per-layer
//    array counts as its largest element), the vocabulary as the element count of
//    tokenizer.ggml.tokens (else ARCH.vocab_size), the chat template as tokenizer.chat_template.
//  - Safetensors folders and Ollama tensor-blob models: config.json's max_position_embeddings,
//    hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads and vocab_size, at
//    the top level or else under text_config; the chat template as a "chat_template" entry of a
//    carried tokenizer_config.json or a carried chat_template.jinja file.
//  - What the file does not say stays empty and shows as "-".
//  - chat_template_rewrite: for a GGUF that llama.cpp is given rewritten (compat::load_rewrite),
//    the handler whose edit gives tokenizer.chat_template the value llama.cpp reads ("" when it
//    reads the file's own, or none): the template the Inference panel and the template lab use.
//  - Ollama-made is compat::detect_ollama_origin's answer; the reason is its first evidence
//    marker ("gemma3: tensor v.blk.0.attn_k.bias (prefix v.)"), or for a file without evidence
//    "no marker of Ollama's writer" (GGUF) / "not a GGUF: Ollama's GGUF writer did not make it".
//  - overview_rows gives the label/value rows in this order: context length, embedding length,
//    layers, heads ("32 (8 KV)" when the KV count differs), vocabulary, chat template
//    ("present" / "none"; with a rewrite's template "none in the file; the compat rewrite adds
//    one on load (HANDLER)" or "present; the compat rewrite replaces it on load (HANDLER)"),
//    Ollama-made ("yes: REASON" / "no: REASON").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

struct ModelOverview {
    std::optional<uint64_t> context_length, embedding_length, layers, heads, kv_heads, vocabulary;
    bool chat_template = false;
    std::string chat_template_rewrite;
    bool ollama_made = false;
    std::string origin_reason;
};

ModelOverview model_overview(const Model& model);
std::vector<std::pair<std::string, std::string>> overview_rows(const ModelOverview& facts);

}  // namespace mlens
