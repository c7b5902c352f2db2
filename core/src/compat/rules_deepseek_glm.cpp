// Text-side handlers for glm4moelite, deepseekocr, glmocr and the nemotron_h family (spec §1.4).
#include "text_rules.h"

#include "detectors.h"

namespace mlens::compat {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

uint64_t scalar_uint(const PlanState& s, const std::string& key) {
    const Value* v = s.kv(key);
    return v && !v->is_array() && !v->is_string() ? v->scalar.as_uint() : 0;
}

void glm4moelite_eog(PlanState& s) {
    const bool need_eot = !s.has_kv("tokenizer.ggml.eot_token_id");
    const bool need_eom = !s.has_kv("tokenizer.ggml.eom_token_id");
    if (!need_eot && !need_eom) return;
    const Value* v = s.kv("tokenizer.ggml.eos_token_ids");
    if (!v || !v->is_array()) return;
    auto et = array_element_type(*v);
    if (et != ValueType::i32 && et != ValueType::u32) return;
    std::vector<uint32_t> ids;
    const auto elems = array_scalars(*v);
    for (const Scalar& e : *elems)
        if (et == ValueType::u32 || e.as_int() >= 0) ids.push_back(static_cast<uint32_t>(e.bits));
    if (need_eot && ids.size() >= 2) s.set_u32("tokenizer.ggml.eot_token_id", ids[1], "eos_token_ids[1]");
    if (need_eom && ids.size() >= 3) s.set_u32("tokenizer.ggml.eom_token_id", ids[2], "eos_token_ids[2]");
}

}  // namespace

void handle_glm4moelite(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "deepseek2");
    s.rename_kv_prefix("glm4moelite.", "deepseek2.");
    s.set_u32("deepseek2.attention.head_count_kv", 1, "MLA absorbs the KV heads");
    auto rank = s.get_u32("deepseek2.attention.kv_lora_rank");
    auto rope = s.get_u32("deepseek2.rope.dimension_count");
    if (rank && rope) {
        s.set_u32("deepseek2.attention.key_length", *rank + *rope, "kv_lora_rank + rope.dimension_count");
        s.set_u32("deepseek2.attention.value_length", *rank, "kv_lora_rank");
    }
    if (auto head = s.get_u32("glm4moelite.attention.key_length")) {
        s.set_u32("deepseek2.attention.key_length_mla", *head, "per-head dim from glm4moelite.attention.key_length");
        s.set_u32("deepseek2.attention.value_length_mla", *head, "per-head dim from glm4moelite.attention.key_length");
    }
    s.inject_u32("deepseek2.expert_group_count", 1);
    s.inject_u32("deepseek2.expert_group_used_count", 1);
    s.set_str("tokenizer.ggml.pre", "glm4");
    glm4moelite_eog(s);
}

void handle_deepseekocr(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "deepseek2-ocr");
    s.rename_kv_prefix("deepseekocr.", "deepseek2-ocr.");
    s.inject_f32("deepseek2-ocr.attention.layer_norm_rms_epsilon", 1e-6f);
    if (auto down = s.tensor("blk.1.ffn_down_exps.weight"))
        s.inject_u32("deepseek2-ocr.expert_feed_forward_length", static_cast<uint32_t>(dim(s, *down, 0)),
                 "blk.1.ffn_down_exps.weight ne[0] (blk.0 is dense)");
    auto shexp = s.tensor("blk.1.ffn_down_shexp.weight");
    auto eff = s.get_u32("deepseek2-ocr.expert_feed_forward_length");
    if (shexp && eff && *eff > 0)
        s.inject_u32("deepseek2-ocr.expert_shared_count", static_cast<uint32_t>(dim(s, *shexp, 0) / *eff),
                 "blk.1.ffn_down_shexp.weight ne[0] / expert_feed_forward_length");
    s.skip_prefix("s.");
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

void handle_glmocr(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "glm4");
    s.rename_kv_prefix("glmocr.", "glm4.");
    pad_sections(s, "glm4.rope.mrope_section", "glm4.rope.dimension_sections", false);
    if (!s.has_kv("glm4.rope.dimension_count"))
        if (auto kl = s.get_u32("glm4.attention.key_length"))
            s.set_u32("glm4.rope.dimension_count", *kl, "from glm4.attention.key_length");
    if (auto pre = s.get_str("tokenizer.ggml.pre"); pre && *pre != "chatglm-bpe")
        s.set_str("tokenizer.ggml.pre", "chatglm-bpe");
    s.rename_tensors_containing(".attn_out.", ".attn_output.");
    s.rename_tensors_containing(".post_attn_norm.", ".post_attention_norm.");
    s.rename_tensors_containing(".post_ffn_norm.", ".post_ffw_norm.");
    s.disable_mmap();
    const uint32_t blocks = s.block_span("blk.", s.get_u32("glm4.block_count").value_or(16));
    for (uint32_t b = 0; b < blocks; ++b) {
        const std::string blk = "blk." + std::to_string(b);
        auto gate = s.tensor(blk + ".ffn_gate.weight");
        auto up = s.tensor(blk + ".ffn_up.weight");
        if (gate && up) {
            DataOp op;
            op.op = DataOpKind::byte_concat;
            op.dest = *up;
            op.sources = {*gate, *up};
            op.note = "gate bytes first, then up";
            s.add_data_op(std::move(op));
            s.set_shape(*up, {dim(s, *up, 0), 2 * dim(s, *up, 1)}, "fused gate‖up");
        }
        s.skip_prefix(blk + ".ffn_gate.");
    }
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

void handle_nemotron_h_omni(PlanState& s, std::string& arch) {
    const bool moe = scalar_uint(s, "nemotron_h_omni.expert_count") > 0 || scalar_uint(s, "nemotron_h_omni.expert_used_count") > 0;
    const std::string text_arch = moe ? "nemotron_h_moe" : "nemotron_h";
    switch_arch(s, arch, text_arch);
    const std::string prefix = "nemotron_h_omni.";
    for (const std::string& key : s.keys()) {
        if (!starts_with(key, prefix)) continue;
        const std::string rest = key.substr(prefix.size());
        if (starts_with(rest, "vision.") || starts_with(rest, "audio.")) continue;
        s.copy_kv(key, text_arch + "." + rest, "omni text keys copied to " + text_arch + " (vision./audio. left out)");
    }
    s.skip_prefix("a.");
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
    if (!moe) return;
    Detection d = detect_nemotron_h_moe(s, arch);
    s.record_check("handle_nemotron_h_moe", "nemotron_h_moe (called by handle_nemotron_h_omni)", d);
    if (!d.fired) return;
    s.begin_rule("handle_nemotron_h_moe");
    handle_nemotron_h_moe(s, arch);
}

void handle_nemotron_h_moe(PlanState& s, std::string&) {
    if (!s.has_kv("nemotron_h_moe.moe_latent_size")) {
        for (uint32_t b = 0; b < 1024; ++b) {
            if (auto t = s.tensor("blk." + std::to_string(b) + ".ffn_latent_in.weight")) {
                s.set_u32("nemotron_h_moe.moe_latent_size", static_cast<uint32_t>(dim(s, *t, 1)),
                          "ne[1] of " + s.slot(*t).name);
                break;
            }
        }
    }
    s.rename_tensors_containing(".ffn_latent_in", ".ffn_latent_down");
    s.rename_tensors_containing(".ffn_latent_out", ".ffn_latent_up");
    s.skip_prefix("mtp.");
}

}  // namespace mlens::compat
