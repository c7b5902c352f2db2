// Ollama origin: whether a GGUF was made by Ollama, decided only on evidence that no file written
// by llama.cpp's own converters (convert_hf_to_gguf.py and gguf-py) or tools (llama-quantize,
// gguf-split) can carry. The shim's detectors (rewrite_plan.h) answer a different question —
// would the shim rewrite this file — and some of them fire on upstream files too, so a plan that
// changes something is never by itself a sign of Ollama. The compat view, `mlens compat` and the
// inference loader (model_loader.h) all ask this one function.
//
// Contract:
//  - detect_ollama_origin(model) never fails and reads metadata and tensor names only. Any format
//    other than GGUF gives no evidence. Every piece of evidence names what was found and why no
//    upstream file has it; the file is Ollama-made when there is at least one.
//  - The evidence, per architecture (the shim's detector markers that are not listed here are not
//    evidence — see below):
//      gemma3          tensor dense.0.weight; a tensor starting v. or mm.; KV gemma3.mm.tokens_per_image,
//                      gemma3.rope.global.freq_base or gemma3.rope.local.freq_base; KV
//                      tokenizer.ggml.add_padding_token or add_unknown_token; KV
//                      gemma3.attention.layer_norm_rms_epsilon missing
//      gemma3n         token_embd.weight and per_layer_token_embd.weight with different row counts
//      gemma4          a tensor starting a., v., mm. or model.vision_tower.; tokenizer.ggml.model "llama"
//      bert            tokenizer.ggml.precompiled_charsmap stored as a STRING array
//      qwen35, qwen35moe  KV <arch>.vision.block_count, <arch>.image_token_id,
//                      <arch>.ssm.v_head_reordered or <arch>.rope.mrope_interleaved; a tensor
//                      starting mtp. or v.
//      qwen3next       a tensor whose name ends .ssm_dt
//      qwen3vl, qwen3vlmoe  KV <arch>.rope.dimension_sections missing
//      laguna          KV laguna.rope.swa.dimension_count or laguna.rope.swa.freq_base; tensor
//                      blk.0.attn_g.weight
//      lfm2            tensor output_norm.weight
//      mistral3        a tensor starting v. or mm.; KV mistral3.rope.scaling.beta_fast,
//                      mistral3.rope.scaling.mscale_all_dim or mistral3.rope.scaling_beta
//      llama4          a tensor starting v. or mm.
//      nemotron_h_moe  a tensor starting blk.0.ffn_latent_in, blk.1.ffn_latent_in or mtp.
//      gptoss, olmo3, qwen25vl, glm4moelite, deepseekocr, glmocr, nemotron_h_omni
//                      the architecture name itself
//      any             KV <arch>.source_quantization or <arch>.source_fp8_tensors; the key order
//                      of Ollama's GGUF writer (below)
//  - Why upstream files cannot have it (checked against the pinned llama.cpp source):
//      * Keys: the converters write only keys defined in gguf-py's Keys (plus general.* metadata),
//        and none of the keys above is one; gguf-py's special-vocab writer sets add_bos, add_eos
//        and add_sep only.
//      * Tensors: the converters map every tensor to a name of gguf-py's MODEL_TENSORS for the
//        architecture (or fail), and no name listed above is one: upstream writes vision, audio
//        and projector tensors (v., mm., a.) into a separate mmproj file whose architecture is
//        clip, multi-token-prediction layers as blk.N.nextn.*, blk.N.ssm_dt.bias, attn_gate,
//        ffn_latent_down/up, dense_2/dense_3 (architecture gemma-embedding), and lfm2's final
//        norm as token_embd_norm.weight.
//      * Missing keys: upstream's gemma3 converter always writes the RMS epsilon and its qwen3vl
//        converter the rope sections, and llama.cpp refuses a gemma3 or qwen3vl file without them.
//      * gemma3n: upstream pads token_embd and per_layer_token_embd to the same vocabulary size
//        and llama.cpp requires both to have n_vocab rows.
//      * gemma4: upstream's converter always writes tokenizer.ggml.model "gemma4".
//      * bert: gguf-py writes the charsmap as bytes (a UINT8 array); Ollama's writer has no UINT8.
//      * Architecture names: none of them is in llama.cpp's architecture table or gguf-py's.
//      * Writer key order: Ollama's writer sorts the keys (by full key, or at HEAD by the key
//        before it prefixes "<arch>."), so the list ascends when each "<arch>."-prefixed key may
//        be compared with or without that prefix. Upstream writes keys in the order the converter
//        adds them, which never ascends: the current converter adds general.type before
//        general.name, older ones <arch>.feed_forward_length before <arch>.attention.head_count
//        or <arch>.context_length before <arch>.block_count; llama.cpp's tools keep the order of
//        the file they copy. Only a file with general.architecture and at least kMinSortedKeys
//        keys in its first shard counts, so a handful of keys in order by chance (an imatrix
//        file, say) is not taken as a layout.
//  - Not evidence, although the shim fires on it: the Llama-3 metadata fix's conditions (a
//    Llama-3 vocabulary with eos_token_id 128001 is what llama.cpp's converter writes for the
//    Llama-3 base models — models/ggml-vocab-llama-bpe.gguf — and converters before
//    tokenizer.ggml.pre existed wrote no pre-tokenizer); qwen35moe.feed_forward_length (a gguf-py
//    key the base converter writes whenever the config has intermediate_size); the snowflake fix
//    on a UINT8 charsmap (it does not fire); the clip side's LLaVA projector default (any clip
//    file without a projector type).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::compat {

struct OriginEvidence {
    std::string marker;  // what was found, e.g. "gemma3: tensor v.blk.0.attn_q.weight (prefix v.)"
    std::string reason;  // why no upstream file has it
};

struct OllamaOrigin {
    std::vector<OriginEvidence> evidence;
    bool ollama_made() const { return !evidence.empty(); }
    // "Ollama-made: <marker>; <marker>" or "no evidence that Ollama made this file".
    std::string summary() const;
};

// Fewer keys than this in the first shard never count as Ollama's sorted key order.
constexpr size_t kMinSortedKeys = 8;

OllamaOrigin detect_ollama_origin(const Model& model);

}  // namespace mlens::compat
