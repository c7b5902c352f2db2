#include "ollama_arch_models.h"

#include <stdexcept>

#include "mlens/formats/gguf_reader.h"
#include "ollama_arch_parts.h"

namespace mlens::test {

namespace {

using namespace ollama_parts;

// olmo3: Ollama's own architecture name for OLMo 3, which llama.cpp loads as olmo2.
OllamaArchModel olmo3() {
    OllamaGguf g("olmo3");
    base_keys(g, "olmo3.", 1);
    tiny_vocabulary(g);
    embeddings(g);
    attention(g, blk(0))
        .tensor("blk.0.attn_q_norm.weight", {kQ})
        .tensor("blk.0.attn_k_norm.weight", {kKv})
        .tensor("blk.0.post_attention_norm.weight", {kEmbd});
    dense_ffn(g, blk(0)).tensor("blk.0.post_ffw_norm.weight", {kEmbd});
    return {"ollama-olmo3.gguf", g.sorted_keys(), "loads_after_compat", "unknown_architecture"};
}

// llama4: one MoE block with its shared expert, and the vision tower and projector in the same
// file (which the text loader must not see).
OllamaArchModel llama4() {
    OllamaGguf g("llama4");
    base_keys(g, "llama4.", 1)
        .u32("llama4.rope.dimension_count", kHeadDim)
        .u32("llama4.expert_count", 2)
        .u32("llama4.expert_used_count", 1)
        .u32("llama4.expert_feed_forward_length", kFf)
        .u32("llama4.interleave_moe_layer_step", 1)
        .u32("llama4.vision.block_count", 1)
        .u32("llama4.vision.embedding_length", kEmbd)
        .u32("llama4.vision.feed_forward_length", kFf)
        .u32("llama4.vision.attention.head_count", kHeads)
        .u32("llama4.vision.image_size", 28)
        .u32("llama4.vision.patch_size", 14)
        .f32("llama4.vision.layer_norm_epsilon", 1e-5f)
        .f32("llama4.vision.pixel_shuffle_ratio", 0.5f);
    tiny_vocabulary(g);
    embeddings(g);
    g.tensor("blk.0.attn_norm.weight", {kEmbd}).tensor("blk.0.ffn_norm.weight", {kEmbd});
    attention(g, blk(0));
    expert_ffn(g, blk(0), 2, kFf);
    shared_expert_ffn(g, blk(0), kFf);
    g.tensor("v.patch_embedding.weight", {14, 14, 3, kEmbd}, kF16)
        .tensor("v.class_embedding", {kEmbd})
        .tensor("v.positional_embedding_vlm", {kEmbd, 5})
        .tensor("v.layernorm_pre.weight", {kEmbd})
        .tensor("v.layernorm_post.weight", {kEmbd})
        .tensor("v.blk.0.attn_norm.weight", {kEmbd})
        .tensor("v.blk.0.ffn_norm.weight", {kEmbd})
        .tensor("v.blk.0.mlp.fc1.weight", {kEmbd, kFf}, kF16)
        .tensor("v.blk.0.mlp.fc2.weight", {kFf, kEmbd}, kF16)
        .tensor("v.vision_adapter.mlp.fc1.weight", {kEmbd * 4, kEmbd}, kF16)
        .tensor("v.vision_adapter.mlp.fc2.weight", {kEmbd, kEmbd}, kF16)
        .tensor("mm.linear_1.weight", {kEmbd, kEmbd}, kF16);
    attention(g, "v.blk.0.");
    return {"ollama-llama4.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// mistral3 (Ministral 3 / Mistral Small 3.x): the YaRN keys under Ollama's names, and the Pixtral
// vision tower and projector in the same file.
OllamaArchModel mistral3() {
    OllamaGguf g("mistral3");
    base_keys(g, "mistral3.", 1)
        .f32("mistral3.rope.scaling.beta_fast", 32.0f)
        .f32("mistral3.rope.scaling.beta_slow", 1.0f)
        .f32("mistral3.rope.scaling.mscale_all_dim", 1.0f)
        .u32("mistral3.spatial_merge_size", 2)
        .u32("mistral3.vision.block_count", 1)
        .u32("mistral3.vision.embedding_length", kEmbd)
        .u32("mistral3.vision.feed_forward_length", kFf)
        .u32("mistral3.vision.attention.head_count", kHeads)
        .u32("mistral3.vision.image_size", 28)
        .u32("mistral3.vision.patch_size", 14)
        .u32("mistral3.vision.num_channels", 3)
        .f32("mistral3.vision.rope.freq_base", 10000.0f);
    tiny_vocabulary(g);
    embeddings(g);
    g.tensor("blk.0.attn_norm.weight", {kEmbd}).tensor("blk.0.ffn_norm.weight", {kEmbd});
    attention(g, blk(0));
    dense_ffn(g, blk(0));
    g.tensor("v.patch_conv.weight", {14, 14, 3, kEmbd}, kF16)
        .tensor("v.encoder_norm.weight", {kEmbd})
        .tensor("v.blk.0.attn_norm.weight", {kEmbd})
        .tensor("v.blk.0.ffn_norm.weight", {kEmbd})
        .tensor("mm.norm.weight", {kEmbd})
        .tensor("mm.patch_merger.merging_layer.weight", {kEmbd * 4, kEmbd}, kF16)
        .tensor("mm.linear_1.weight", {kEmbd, kEmbd}, kF16)
        .tensor("mm.linear_2.weight", {kEmbd, kEmbd}, kF16);
    vision_block(g, "attn_output");
    return {"ollama-mistral3.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// qwen3vl: no rope.dimension_sections (llama.cpp requires it), and the vision tower with Q/K/V
// split, the patch embedding packed 4-D, and one deepstack merger in the same file.
OllamaArchModel qwen3vl() {
    OllamaGguf g("qwen3vl");
    base_keys(g, "qwen3vl.", 1)
        .u32("qwen3vl.attention.key_length", kHeadDim)
        .u32("qwen3vl.attention.value_length", kHeadDim)
        .f32("qwen3vl.vision.attention.layer_norm_epsilon", 1e-6f)
        .u32("qwen3vl.vision.temporal_patch_size", 2)
        .kv("qwen3vl.vision.deepstack_visual_indexes", compat::array_i32({0}));
    qwen_vision_keys(g, "qwen3vl.");
    tiny_vocabulary(g);
    embeddings(g);
    g.tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.attn_q_norm.weight", {kHeadDim})
        .tensor("blk.0.attn_k_norm.weight", {kHeadDim})
        .tensor("blk.0.ffn_norm.weight", {kEmbd});
    attention(g, blk(0));
    dense_ffn(g, blk(0));
    qwen_vision_tower(g, true);
    return {"ollama-qwen3vl.gguf", g.sorted_keys(), "loads_after_compat", "missing_key"};
}

// glmocr: Ollama's name for GLM-OCR (llama.cpp's glm4), separate FFN gate and up, Ollama's norm
// and output names, M-RoPE sections of three, and the vision tower in the same file.
OllamaArchModel glmocr() {
    OllamaGguf g("glmocr");
    base_keys(g, "glmocr.", 1)
        .u32("glmocr.attention.key_length", kHeadDim)
        .u32("glmocr.attention.value_length", kHeadDim)
        .kv("glmocr.rope.mrope_section", compat::array_i32({2, 1, 1}))
        .u32("glmocr.vision.block_count", 1)
        .u32("glmocr.vision.embedding_length", kEmbd)
        .u32("glmocr.vision.intermediate_size", kFf)
        .u32("glmocr.vision.attention.head_count", kHeads)
        .f32("glmocr.vision.attention.layer_norm_rms_epsilon", 1e-5f)
        .u32("glmocr.vision.image_size", 28)
        .u32("glmocr.vision.patch_size", 14)
        .u32("glmocr.vision.spatial_merge_size", 2)
        .u32("glmocr.vision.out_hidden_size", kEmbd);
    tiny_vocabulary(g);
    embeddings(g);
    g.tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.post_attn_norm.weight", {kEmbd})
        .tensor("blk.0.ffn_norm.weight", {kEmbd})
        .tensor("blk.0.post_ffn_norm.weight", {kEmbd});
    attention(g, blk(0), "attn_out");
    dense_ffn(g, blk(0));
    g.tensor("v.patch_embd_0.weight", {14, 14, 3, kEmbd}, kF16)
        .tensor("v.patch_embd_1.weight", {14, 14, 3, kEmbd}, kF16)
        .tensor("v.blk.0.attn_norm.weight", {kEmbd})
        .tensor("v.blk.0.ffn_norm.weight", {kEmbd})
        .tensor("v.post_ln.weight", {kEmbd})
        .tensor("mm.model.fc.weight", {kEmbd, kEmbd}, kF16);
    vision_block(g, "attn_out");
    return {"ollama-glmocr.gguf", g.sorted_keys(), "loads_after_compat", "unknown_architecture"};
}

// EmbeddingGemma: Ollama writes it as gemma3 with the Dense projections dense.0 / dense.1 and the
// final norm named norm.weight; llama.cpp loads it as gemma-embedding.
OllamaArchModel embeddinggemma() {
    OllamaGguf g("gemma3");
    base_keys(g, "gemma3.", 1)
        .u32("gemma3.attention.key_length", kHeadDim)
        .u32("gemma3.attention.value_length", kHeadDim)
        .u32("gemma3.attention.sliding_window", 16)
        .boolean("gemma3.attention.causal", false)
        .u32("gemma3.pooling_type", 1);
    tiny_vocabulary(g);
    embeddings(g, true, "norm.weight");
    g.tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.attn_q_norm.weight", {kHeadDim})
        .tensor("blk.0.attn_k_norm.weight", {kHeadDim})
        .tensor("blk.0.post_attention_norm.weight", {kEmbd})
        .tensor("blk.0.ffn_norm.weight", {kEmbd})
        .tensor("blk.0.post_ffw_norm.weight", {kEmbd})
        .tensor("dense.0.weight", {kEmbd, kEmbd * 4}, kF16)
        .tensor("dense.1.weight", {kEmbd * 4, kEmbd}, kF16);
    attention(g, blk(0));
    dense_ffn(g, blk(0));
    return {"ollama-embeddinggemma.gguf", g.sorted_keys(), "loads_after_compat", "missing_tensor"};
}

// glm4moelite (GLM-4.7-Flash): Ollama's name for a DeepSeek-2-style MLA model, with per-head key
// and value lengths where llama.cpp expects the latent ones; a dense block, then a MoE block.
OllamaArchModel glm4moelite() {
    OllamaGguf g("glm4moelite");
    const uint64_t q_rank = 16, kv_rank = 16, rope = 8, nope = 16, head = nope + rope, experts = 4, expert_ff = 32;
    base_keys(g, "glm4moelite.", 2)
        .u32("glm4moelite.rope.dimension_count", rope)
        .u32("glm4moelite.attention.q_lora_rank", q_rank)
        .u32("glm4moelite.attention.kv_lora_rank", kv_rank)
        .u32("glm4moelite.attention.key_length", head)
        .u32("glm4moelite.attention.value_length", head)
        .u32("glm4moelite.leading_dense_block_count", 1)
        .u32("glm4moelite.expert_count", experts)
        .u32("glm4moelite.expert_used_count", 2)
        .u32("glm4moelite.expert_shared_count", 1)
        .u32("glm4moelite.expert_feed_forward_length", expert_ff)
        .f32("glm4moelite.expert_weights_scale", 1.0f)
        .boolean("glm4moelite.expert_weights_norm", true)
        .u32("glm4moelite.expert_gating_func", 2);
    tiny_vocabulary(g);
    g.kv("tokenizer.ggml.eos_token_ids", compat::array_i32({2, 1, 0}));
    embeddings(g);
    for (int i = 0; i < 2; ++i) {
        const std::string b = blk(i);
        g.tensor(b + "attn_norm.weight", {kEmbd})
            .tensor(b + "attn_q_a_norm.weight", {q_rank})
            .tensor(b + "attn_kv_a_norm.weight", {kv_rank})
            .tensor(b + "attn_q_a.weight", {kEmbd, q_rank}, kF16)
            .tensor(b + "attn_q_b.weight", {q_rank, kHeads * head}, kF16)
            .tensor(b + "attn_kv_a_mqa.weight", {kEmbd, kv_rank + rope}, kF16)
            .tensor(b + "attn_k_b.weight", {nope, kv_rank, kHeads}, kF16)
            .tensor(b + "attn_v_b.weight", {kv_rank, head, kHeads}, kF16)
            .tensor(b + "attn_output.weight", {kHeads * head, kEmbd}, kF16)
            .tensor(b + "ffn_norm.weight", {kEmbd});
    }
    dense_ffn(g, blk(0));
    expert_ffn(g, blk(1), experts, expert_ff).tensor("blk.1.exp_probs_b.bias", {experts});
    shared_expert_ffn(g, blk(1), expert_ff);
    return {"ollama-glm4moelite.gguf", g.sorted_keys(), "loads_after_compat", "unknown_architecture"};
}

// deepseekocr: Ollama's name for DeepSeek-OCR's language model (llama.cpp's deepseek2-ocr),
// without the norm epsilon and the expert widths it derives from the tensors, and the SAM and CLIP
// encoders and projector in the same file.
OllamaArchModel deepseekocr() {
    OllamaGguf g("deepseekocr");
    const uint64_t experts = 4, expert_ff = 32;
    g.u32("deepseekocr.context_length", 256)
        .u32("deepseekocr.embedding_length", kEmbd)
        .u32("deepseekocr.block_count", 2)
        .u32("deepseekocr.feed_forward_length", kFf)
        .u32("deepseekocr.attention.head_count", kHeads)
        .u32("deepseekocr.attention.head_count_kv", kHeads)
        .f32("deepseekocr.rope.freq_base", 10000.0f)
        .u32("deepseekocr.leading_dense_block_count", 1)
        .u32("deepseekocr.expert_count", experts)
        .u32("deepseekocr.expert_used_count", 2)
        .u32("deepseekocr.vision.block_count", 1)
        .u32("deepseekocr.vision.embedding_length", kEmbd)
        .u32("deepseekocr.vision.head_count", kHeads)
        .u32("deepseekocr.vision.image_size", 28)
        .u32("deepseekocr.vision.patch_size", 14)
        .u32("deepseekocr.sam.block_count", 1)
        .u32("deepseekocr.sam.embedding_length", kEmbd)
        .u32("deepseekocr.sam.head_count", kHeads);
    tiny_vocabulary(g);
    embeddings(g);
    for (int i = 0; i < 2; ++i) {
        const std::string b = blk(i);
        g.tensor(b + "attn_norm.weight", {kEmbd}).tensor(b + "ffn_norm.weight", {kEmbd});
        attention(g, b, "attn_output", kQ);
    }
    dense_ffn(g, blk(0));
    expert_ffn(g, blk(1), experts, expert_ff);
    shared_expert_ffn(g, blk(1), expert_ff * 2);
    g.tensor("v.patch_embd.weight", {14, 14, 3, kEmbd}, kF16)
        .tensor("v.position_embd.weight", {kEmbd, 5})
        .tensor("v.pre_layrnorm.weight", {kEmbd})
        .tensor("v.blk.0.layer_norm1.weight", {kEmbd})
        .tensor("v.blk.0.layer_norm2.weight", {kEmbd})
        .tensor("v.blk.0.self_attn.qkv_proj.weight", {kEmbd, kEmbd * 3}, kF16)
        .tensor("v.blk.0.self_attn.out_proj.weight", {kEmbd, kEmbd}, kF16)
        .tensor("v.blk.0.mlp.fc1.weight", {kEmbd, kFf}, kF16)
        .tensor("v.blk.0.mlp.fc2.weight", {kFf, kEmbd}, kF16)
        .tensor("s.patch_embd.weight", {16, 16, 3, kEmbd}, kF16)
        .tensor("s.position_embd", {kEmbd, 4, 4})
        .tensor("s.blk.0.norm1.weight", {kEmbd})
        .tensor("s.blk.0.norm2.weight", {kEmbd})
        .tensor("s.blk.0.attn.qkv.weight", {kEmbd, kEmbd * 3}, kF16)
        .tensor("s.blk.0.attn.proj.weight", {kEmbd, kEmbd}, kF16)
        .tensor("s.blk.0.attn.rel_pos_h", {kHeadDim, 7})
        .tensor("s.blk.0.attn.rel_pos_w", {kHeadDim, 7})
        .tensor("mm.layers.weight", {kEmbd * 2, kEmbd}, kF16)
        .tensor("mm.image_newline", {kEmbd})
        .tensor("mm.view_seperator", {kEmbd});
    return {"ollama-deepseekocr.gguf", g.sorted_keys(), "loads_after_compat", "unknown_architecture"};
}

// laguna: Ollama's names for the sliding-window rope keys and the attention gate (attn_g); a
// dense block, then a MoE block with its shared expert.
OllamaArchModel laguna() {
    OllamaGguf g("laguna");
    const uint64_t experts = 4, expert_ff = 32;
    base_keys(g, "laguna.", 2)
        .u32("laguna.attention.key_length", kHeadDim)
        .u32("laguna.attention.value_length", kHeadDim)
        .u32("laguna.attention.sliding_window", 64)
        .u32("laguna.rope.swa.dimension_count", kHeadDim)
        .f32("laguna.rope.swa.freq_base", 10000.0f)
        .u32("laguna.leading_dense_block_count", 1)
        .u32("laguna.expert_count", experts)
        .u32("laguna.expert_used_count", 2)
        .u32("laguna.expert_feed_forward_length", expert_ff);
    tiny_vocabulary(g);
    embeddings(g);
    for (int i = 0; i < 2; ++i) {
        const std::string b = blk(i);
        g.tensor(b + "attn_norm.weight", {kEmbd})
            .tensor(b + "attn_q_norm.weight", {kHeadDim})
            .tensor(b + "attn_k_norm.weight", {kHeadDim})
            .tensor(b + "attn_g.weight", {kEmbd, kHeads}, kF16)
            .tensor(b + "ffn_norm.weight", {kEmbd});
        attention(g, b);
    }
    dense_ffn(g, blk(0));
    expert_ffn(g, blk(1), experts, expert_ff).tensor("blk.1.exp_probs_b.bias", {experts});
    shared_expert_ffn(g, blk(1), expert_ff);
    return {"ollama-laguna.gguf", g.sorted_keys(), "loads_after_compat", "missing_tensor"};
}

// gemma3n: token_embd and the vocabulary arrays keep the audio and vision tokens (8 more rows
// than the text vocabulary that per_layer_token_embd has).
OllamaArchModel gemma3n() {
    OllamaGguf g("gemma3n");
    const uint64_t altup = 4, laurel = 64, per_layer = 256, extra_rows = 8;
    base_keys(g, "gemma3n.", 1)
        .u32("gemma3n.attention.key_length", kHeadDim)
        .u32("gemma3n.attention.value_length", kHeadDim)
        .u32("gemma3n.attention.sliding_window", 64)
        .u32("gemma3n.altup.num_inputs", altup)
        .u32("gemma3n.embedding_length_per_layer_input", per_layer);
    tiny_vocabulary(g, extra_rows);
    g.tensor("token_embd.weight", {kEmbd, kVocab + extra_rows}, kF16)
        .tensor("per_layer_token_embd.weight", {per_layer, kVocab}, kF16)
        .tensor("per_layer_model_proj.weight", {kEmbd, per_layer}, kF16)
        .tensor("per_layer_proj_norm.weight", {per_layer})
        .tensor("altup_proj.weight", {kEmbd, kEmbd, altup - 1}, kF16)
        .tensor("altup_unembd_proj.weight", {kEmbd, kEmbd, altup - 1}, kF16)
        .tensor("output_norm.weight", {kEmbd})
        .tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.attn_q_norm.weight", {kHeadDim})
        .tensor("blk.0.attn_k_norm.weight", {kHeadDim})
        .tensor("blk.0.post_attention_norm.weight", {kEmbd})
        .tensor("blk.0.ffn_norm.weight", {kEmbd})
        .tensor("blk.0.post_ffw_norm.weight", {kEmbd})
        .tensor("blk.0.inp_gate.weight", {kEmbd, per_layer}, kF16)
        .tensor("blk.0.proj.weight", {per_layer, kEmbd}, kF16)
        .tensor("blk.0.post_norm.weight", {kEmbd})
        .tensor("blk.0.altup_correct_coef.weight", {altup, altup})
        .tensor("blk.0.altup_correct_scale.weight", {kEmbd})
        .tensor("blk.0.altup_predict_coef.weight", {altup, altup * altup})
        .tensor("blk.0.altup_router.weight", {kEmbd, altup}, kF16)
        .tensor("blk.0.altup_router_norm.weight", {kEmbd})
        .tensor("blk.0.laurel_l.weight", {kEmbd, laurel}, kF16)
        .tensor("blk.0.laurel_r.weight", {laurel, kEmbd}, kF16)
        .tensor("blk.0.laurel_post_norm.weight", {kEmbd});
    attention(g, blk(0));
    dense_ffn(g, blk(0));
    return {"ollama-gemma3n.gguf", g.sorted_keys(), "loads_after_compat", "wrong_shape"};
}

// gemma4 (the MoE variant): Ollama's tokenizer model "llama" (with merges and the "gemma4"
// pre-tokenizer), expert gate and up as separate tensors, the per-expert scale under its older
// name, and the vision tower in the same file. A sliding-window block, then a full one.
OllamaArchModel gemma4() {
    OllamaGguf g("gemma4");
    const uint64_t experts = 4, expert_ff = 32;
    base_keys(g, "gemma4.", 2)
        .u32("gemma4.attention.key_length", kHeadDim)
        .u32("gemma4.attention.value_length", kHeadDim)
        .u32("gemma4.attention.key_length_swa", kHeadDim)
        .u32("gemma4.attention.value_length_swa", kHeadDim)
        .u32("gemma4.attention.sliding_window", 64)
        .kv("gemma4.attention.sliding_window_pattern", compat::array_bool({true, false}))
        .f32("gemma4.rope.freq_base_swa", 10000.0f)
        .u32("gemma4.embedding_length_per_layer_input", 0)
        .f32("gemma4.final_logit_softcapping", 30.0f)
        .u32("gemma4.expert_count", experts)
        .u32("gemma4.expert_used_count", 2)
        .u32("gemma4.expert_feed_forward_length", expert_ff)
        .u32("gemma4.vision.block_count", 1)
        .u32("gemma4.vision.embedding_length", kEmbd)
        .u32("gemma4.vision.feed_forward_length", kFf)
        .u32("gemma4.vision.attention.head_count", kHeads)
        .u32("gemma4.vision.patch_size", 16)
        .f32("gemma4.vision.attention.layer_norm_epsilon", 1e-6f);
    tiny_vocabulary(g)
        .str("tokenizer.ggml.pre", "gemma4")
        .kv("tokenizer.ggml.merges", compat::array_strings({"\u2581 t", "h e", "\u2581t he"}));
    embeddings(g, true).tensor("rope_freqs.weight", {kHeadDim / 2});
    for (int i = 0; i < 2; ++i) {
        const std::string b = blk(i);
        g.tensor(b + "attn_norm.weight", {kEmbd})
            .tensor(b + "attn_q_norm.weight", {kHeadDim})
            .tensor(b + "attn_k_norm.weight", {kHeadDim})
            .tensor(b + "post_attention_norm.weight", {kEmbd})
            .tensor(b + "layer_output_scale.weight", {1})
            .tensor(b + "ffn_norm.weight", {kEmbd})
            .tensor(b + "post_ffw_norm.weight", {kEmbd})
            .tensor(b + "pre_ffw_norm_2.weight", {kEmbd})
            .tensor(b + "post_ffw_norm_1.weight", {kEmbd})
            .tensor(b + "post_ffw_norm_2.weight", {kEmbd})
            .tensor(b + "ffn_gate_inp.scale", {kEmbd})
            .tensor(b + "ffn_gate_inp.per_expert_scale", {experts});
        attention(g, b);
        dense_ffn(g, b);
        expert_ffn(g, b, experts, expert_ff);
    }
    g.tensor("v.patch_embd.weight", {16, 16, 3, kEmbd}, kF16)
        .tensor("v.position_embd.weight", {kEmbd, 16, 2})
        .tensor("v.blk.0.ln1.weight", {kEmbd})
        .tensor("v.blk.0.ln2.weight", {kEmbd})
        .tensor("mm.input_projection.weight", {kEmbd, kEmbd}, kF16);
    vision_block(g, "attn_out");
    return {"ollama-gemma4.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// qwen3vlmoe: qwen3vl's layout with MoE blocks.
OllamaArchModel qwen3vlmoe() {
    OllamaGguf g("qwen3vlmoe");
    const uint64_t experts = 4, expert_ff = 32;
    base_keys(g, "qwen3vlmoe.", 1)
        .u32("qwen3vlmoe.attention.key_length", kHeadDim)
        .u32("qwen3vlmoe.attention.value_length", kHeadDim)
        .u32("qwen3vlmoe.expert_count", experts)
        .u32("qwen3vlmoe.expert_used_count", 2)
        .u32("qwen3vlmoe.expert_feed_forward_length", expert_ff)
        .kv("qwen3vlmoe.vision.deepstack_visual_indexes", compat::array_i32({0}));
    qwen_vision_keys(g, "qwen3vlmoe.");
    tiny_vocabulary(g);
    embeddings(g);
    g.tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.attn_q_norm.weight", {kHeadDim})
        .tensor("blk.0.attn_k_norm.weight", {kHeadDim})
        .tensor("blk.0.ffn_norm.weight", {kEmbd});
    attention(g, blk(0));
    expert_ffn(g, blk(0), experts, expert_ff);
    qwen_vision_tower(g, true);
    return {"ollama-qwen3vlmoe.gguf", g.sorted_keys(), "loads_after_compat", "missing_key"};
}

std::string base64(const std::vector<uint8_t>& bytes) {
    static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t n = static_cast<uint32_t>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) n |= bytes[i + 2];
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
    }
    return out;
}

// snowflake-arctic-embed2: a BERT encoder with an XLM-R (T5 Unigram) vocabulary whose
// precompiled charsmap Ollama's writer, which has no byte arrays, stored as base64 text one
// character per string. The charsmap bytes are the real one of the pinned llama.cpp's
// ggml-vocab-nomic-bert-moe.gguf; the tokens are a few of ours.
OllamaArchModel snowflake_arctic_embed2() {
    OllamaGguf g("bert");
    g.u32("bert.context_length", 64)
        .u32("bert.embedding_length", kEmbd)
        .u32("bert.block_count", 1)
        .u32("bert.feed_forward_length", kFf)
        .u32("bert.attention.head_count", kHeads)
        .f32("bert.attention.layer_norm_epsilon", 1e-5f)
        .boolean("bert.attention.causal", false)
        .u32("bert.pooling_type", 2);
    auto source = open_gguf(llama_source_dir() + "/models/ggml-vocab-nomic-bert-moe.gguf");
    if (!source) throw std::runtime_error("cannot open the nomic-bert-moe vocabulary");
    const auto bytes = compat::array_scalars(source->find("tokenizer.ggml.precompiled_charsmap")->value);
    std::vector<uint8_t> charsmap;
    for (const Scalar& b : *bytes) charsmap.push_back(static_cast<uint8_t>(b.bits));
    std::vector<std::string> chars;
    for (char c : base64(charsmap)) chars.emplace_back(1, c);
    std::vector<std::string> tokens = {"<s>", "<pad>", "</s>", "<unk>", "\u2581", "\u2581the", "\u2581model", "\u2581file"};
    std::vector<int32_t> types = {3, 3, 3, 2, 1, 1, 1, 1};
    for (char c = 'a'; c <= 'z'; ++c) {
        tokens.emplace_back(1, c);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size());
    for (size_t i = 4; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i);
    g.str("tokenizer.ggml.model", "t5")
        .str("tokenizer.ggml.pre", "default")
        .kv("tokenizer.ggml.tokens", compat::array_strings(tokens))
        .kv("tokenizer.ggml.scores", compat::array_f32(scores))
        .kv("tokenizer.ggml.token_type", compat::array_i32(types))
        .kv("tokenizer.ggml.precompiled_charsmap", compat::array_strings(chars))
        .u32("tokenizer.ggml.token_type_count", 1)
        .u32("tokenizer.ggml.bos_token_id", 0)
        .u32("tokenizer.ggml.padding_token_id", 1)
        .u32("tokenizer.ggml.eos_token_id", 2)
        .u32("tokenizer.ggml.unknown_token_id", 3)
        .boolean("tokenizer.ggml.add_bos_token", true)
        .boolean("tokenizer.ggml.add_eos_token", true);
    g.tensor("token_embd.weight", {kEmbd, tokens.size()}, kF16)
        .tensor("token_types.weight", {kEmbd, 1})
        .tensor("position_embd.weight", {kEmbd, 64}, kF16)
        .tensor("token_embd_norm.weight", {kEmbd})
        .tensor("token_embd_norm.bias", {kEmbd});
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output"})
        g.tensor(std::string("blk.0.") + t + ".weight", {kEmbd, kEmbd}, kF16).tensor(std::string("blk.0.") + t + ".bias", {kEmbd});
    for (const char* n : {"attn_output_norm", "layer_output_norm"})
        g.tensor(std::string("blk.0.") + n + ".weight", {kEmbd}).tensor(std::string("blk.0.") + n + ".bias", {kEmbd});
    g.tensor("blk.0.ffn_up.weight", {kEmbd, kFf}, kF16)
        .tensor("blk.0.ffn_up.bias", {kFf})
        .tensor("blk.0.ffn_down.weight", {kFf, kEmbd}, kF16)
        .tensor("blk.0.ffn_down.bias", {kEmbd});
    return {"ollama-snowflake-arctic-embed2.gguf", g.sorted_keys(), "loads_after_compat", "bad_vocabulary"};
}

}  // namespace

std::vector<OllamaArchModel> ollama_arch_models() {
    std::vector<OllamaArchModel> out = {olmo3(),
                                        llama4(),
                                        mistral3(),
                                        qwen3vl(),
                                        qwen3vlmoe(),
                                        glmocr(),
                                        embeddinggemma(),
                                        glm4moelite(),
                                        deepseekocr(),
                                        laguna(),
                                        gemma3n(),
                                        gemma4(),
                                        snowflake_arctic_embed2()};
    for (OllamaArchModel& m : ollama_parts::hybrid_models()) out.push_back(std::move(m));
    return out;
}

}  // namespace mlens::test
