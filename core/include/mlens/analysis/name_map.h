// Name maps: how a tensor of one model is found in another whose tensors are named or laid out
// differently, and how its values must be transformed to compare them numerically.
//
// Contract:
//  - A NameMap takes a tensor name of the model it applies to and returns its counterpart in the
//    other model, or nullopt when it has none there (the name is then paired as is).
//  - NameMatch::slice: the counterpart is one index of the slowest dimension of that tensor
//    (one expert of a stacked tensor). rope_heads > 0: the source's slowest dimension holds
//    `rope_heads` heads in Hugging Face order and is reordered as llama.cpp's converter does
//    (LlamaModel.permute: within each head, row 2i + j of the GGUF layout is row j * half + i of
//    the HF layout). add: the converter adds this to every value (Gemma norms, +1).
//  - hf_to_gguf_name_map covers the text tensors of llama, mistral and mixtral (GGUF arch
//    "llama"; Q/K permuted with n_head / n_head_kv), qwen2, qwen3, qwen2moe, qwen3moe, gemma,
//    gemma2 and gemma3 (norm weights +1; the "language_model." prefixes of multimodal
//    checkpoints are accepted). Per-expert HF tensors map to a slice of the stacked GGUF tensor.
//    Names it does not know give nullopt. Decision: lm_head.weight maps to output.weight for
//    every architecture, although converters drop it for tied-embedding models.
//  - detect_hf_architecture reads the architecture and head counts from a GGUF model
//    (general.architecture, <arch>.attention.head_count, head_count_kv) or from the config.json
//    a safetensors folder carries ("file:config.json": model_type, num_attention_heads,
//    num_key_value_heads, also under text_config). HF model types are mapped to GGUF names
//    (mistral and mixtral -> llama, qwen2_moe -> qwen2moe, gemma3_text -> gemma3).
//  - has_hf_names: the model has a tensor named model.* or lm_head.* or language_model.*.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "mlens/model/model.h"

namespace mlens {

struct NameMatch {
    std::string name;
    std::optional<uint64_t> slice;
    uint32_t rope_heads = 0;
    float add = 0.0f;
};

using NameMap = std::function<std::optional<NameMatch>(const std::string& name)>;

struct HfArchitecture {
    std::string arch;  // GGUF architecture name, e.g. "llama", "qwen3moe"
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;  // 0: same as n_head
};

std::optional<HfArchitecture> detect_hf_architecture(const Model& model);
NameMap hf_to_gguf_name_map(const HfArchitecture& arch);
bool has_hf_names(const Model& model);

}  // namespace mlens
