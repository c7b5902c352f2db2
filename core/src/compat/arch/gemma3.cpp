// gemma3 (spec §1.4 and §1.5): text-side KV fixes and the SigLIP clip side.
//
// handle_gemma3_clip (spec §1.5): SigLIP tower + gemma3 projector. The .mlp.fc1 → .ffn_down and
// .mlp.fc2 → .ffn_up renames are the legacy swapped convention; upstream clip.cpp swaps them back
// by shape (is_ffn_swapped), so the plan keeps them as the shim writes them.
#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

// Appendix A: injected when a gemma3 file has no chat template.
constexpr const char* kGemma3ChatTemplate =
    R"TMPL({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})TMPL";

Detection detect_gemma3(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3") return wrong_arch(arch, "gemma3");
    return Markers(s)
        .kv("gemma3.mm.tokens_per_image")
        .prefix("v.")
        .prefix("mm.")
        .kv("gemma3.rope.global.freq_base")
        .kv("gemma3.rope.local.freq_base")
        .kv("tokenizer.ggml.add_padding_token")
        .kv("tokenizer.ggml.add_unknown_token")
        .add("KV gemma3.attention.layer_norm_rms_epsilon missing", [&s] { return !s.has_kv("gemma3.attention.layer_norm_rms_epsilon"); })
        .any();
}

// clang-format off
constexpr KeyCopy kRopeKeys[] = {
    {"rope.global.freq_base", "gemma3.rope.freq_base", CopyAs::f32},
    {"rope.local.freq_base", "gemma3.rope.freq_base_swa", CopyAs::f32},
};
// clang-format on

// No RMSNorm +1 shift: Ollama's gemma3 files already carry it.
void handle_gemma3(PlanState& s, std::string&) {
    s.copy_keys("gemma3.", kRopeKeys);
    s.inject_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    s.inject_f32("gemma3.rope.freq_base", 1000000.0f);
    s.inject_f32("gemma3.rope.freq_base_swa", 10000.0f);
    s.inject_str("tokenizer.chat_template", kGemma3ChatTemplate);
    if (auto ctx = s.get_u32("gemma3.context_length"); ctx && *ctx >= 131072) {
        s.inject_str("gemma3.rope.scaling.type", "linear", "context_length >= 131072");
        s.inject_f32("gemma3.rope.scaling.factor", 8.0f, "context_length >= 131072");
    }
    if (auto te = s.tensor("token_embd.weight")) {
        const uint64_t rows = dim(s, *te, 1);
        s.truncate_str_arr("tokenizer.ggml.tokens", rows);
        s.truncate_data_arr("tokenizer.ggml.scores", ValueType::f32, rows);
        s.truncate_data_arr("tokenizer.ggml.token_type", ValueType::i32, rows);
    }
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::feed_forward_length, vision_key::image_size,
    vision_key::patch_size, vision_key::head_count, vision_key::layer_norm_epsilon, vision_key::projection_dim,
};
// clang-format on

void handle_gemma3_clip(PlanState& s, const std::string&) {
    s.copy_keys("gemma3.", kClipKeys);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    declare_vision_clip(s, "gelu", "gemma3");

    rename_all_containing(s,
                          {
                              {"v.patch_embedding", "v.patch_embd"},
                              {"v.position_embedding", "v.position_embd"},
                              {"v.post_layernorm", "v.post_ln"},
                              {".layer_norm1", ".ln1"},
                              {".layer_norm2", ".ln2"},
                              {".attn_output", ".attn_out"},
                              {".mlp.fc1", ".ffn_down"},
                              {".mlp.fc2", ".ffn_up"},
                              {"mm.mm_input_projection", "mm.input_projection"},
                              {"mm.mm_soft_emb_norm", "mm.soft_emb_norm"},
                          });
    s.promote_tensor_to_f32("v.patch_embd.weight");
    s.promote_tensor_to_f32("v.position_embd.weight");
}

}  // namespace

const ArchRules kGemma3Rules = {"gemma3", "gemma3", detect_gemma3, handle_gemma3, handle_gemma3_clip};

}  // namespace mlens::compat
