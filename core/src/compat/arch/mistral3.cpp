// mistral3 (spec §1.4 and §1.5): yarn keys under upstream's names on the text side, Pixtral on
// the clip side.
//
// handle_mistral3_clip (spec §1.5, Pixtral). The [IMG_BREAK] embedding upstream wants as
// v.token_embd.img_break is synthesized in the orphaned output_norm.weight slot and zero-filled
// (the true value, row 12 of the quantized token_embd, is not read). Vision Q/K rows get the LLaMA
// RoPE permute the legacy converter applied only to text Q/K; only F16 Q/K are permuted.
#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

void permute_qk(PlanState& s, const std::string& name, uint32_t n_head) {
    auto slot = s.tensor(name);
    if (!slot || s.slot(*slot).type != kTypeF16) return;
    const std::vector<uint64_t>& ne = s.slot(*slot).ne;
    const uint64_t rows = ne.size() > 1 ? ne[1] : 1;
    if (n_head == 0 || rows % n_head != 0) return;
    s.add_data_op(make_op(DataOpKind::rope_permute_rows, *slot, {*slot}, {static_cast<int64_t>(n_head)},
                          "LLaMA RoPE permute of whole rows, n_head " + std::to_string(n_head)));
}

Detection detect_mistral3(const PlanState& s, const std::string& arch) {
    if (arch != "mistral3") return wrong_arch(arch, "mistral3");
    return Markers(s)
        .prefix("v.")
        .prefix("mm.")
        .kv("mistral3.rope.scaling.beta_fast")
        .kv("mistral3.rope.scaling.mscale_all_dim")
        .kv("mistral3.rope.scaling_beta")
        .any();
}

// clang-format off
constexpr KeyCopy kYarnKeys[] = {
    {"rope.scaling.beta_fast", "mistral3.rope.scaling.yarn_beta_fast", CopyAs::any},
    {"rope.scaling.beta_slow", "mistral3.rope.scaling.yarn_beta_slow", CopyAs::any},
    {"rope.scaling.mscale_all_dim", "mistral3.rope.scaling.yarn_log_multiplier", CopyAs::any},
    {"rope.scaling_beta", "mistral3.attention.temperature_scale", CopyAs::any},
};
// clang-format on

void handle_mistral3(PlanState& s, std::string&) {
    s.copy_keys("mistral3.", kYarnKeys);
    if (pre_is_default(s)) s.set_str("tokenizer.ggml.pre", "tekken", "pre was missing, empty or default");
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::feed_forward_length, vision_key::head_count,
    vision_key::image_size, vision_key::patch_size, vision_key::num_channels,
    {"spatial_merge_size", "clip.vision.spatial_merge_size", CopyAs::u32},
    {"vision.rope.freq_base", "clip.rope.freq_base", CopyAs::f32},
    vision_key::projection_dim,
};
// clang-format on

void handle_mistral3_clip(PlanState& s, const std::string&) {
    s.copy_keys("mistral3.", kClipKeys);
    s.inject_f32("clip.vision.attention.layer_norm_epsilon", 1e-5f);
    inject_mean_std(s, {0.48145467f, 0.45782750f, 0.40821072f}, {0.26862955f, 0.26130259f, 0.27577710f});
    declare_vision_clip(s, "silu", "pixtral");

    const uint32_t embd = s.read_u32("mistral3.embedding_length").value_or(0);
    if (embd > 0 &&
        s.reclaim_slot_as("output_norm.weight", "v.token_embd.img_break", {embd}, kTypeF32, "reclaimed slot of output_norm.weight")) {
        size_t slot = *s.tensor("v.token_embd.img_break");
        s.add_data_op(make_op(DataOpKind::zero_fill, slot, {}, {}, "img_break zero-filled (row 12 of token_embd is not read)"));
    }

    if (s.has_kv("mistral3.vision.attention.head_count") && s.has_kv("mistral3.vision.block_count")) {
        const uint32_t n_head = s.read_u32("mistral3.vision.attention.head_count").value_or(0);
        const uint32_t blocks = s.block_span("v.blk.", s.read_u32("mistral3.vision.block_count").value_or(0));
        for (uint32_t b = 0; b < blocks; ++b) {
            const std::string p = "v.blk." + std::to_string(b) + ".";
            permute_qk(s, p + "attn_q.weight", n_head);
            permute_qk(s, p + "attn_k.weight", n_head);
        }
    }

    rename_all_containing(s,
                          {
                              {"v.patch_conv", "v.patch_embd"},
                              {"v.encoder_norm", "v.pre_ln"},
                              {".attn_output", ".attn_out"},
                              {".attn_norm", ".ln1"},
                              {".ffn_norm", ".ln2"},
                              {"mm.linear_1", "mm.1"},
                              {"mm.linear_2", "mm.2"},
                              {"mm.patch_merger.merging_layer", "mm.patch_merger"},
                              {"mm.norm", "mm.input_norm"},
                          });
    s.promote_tensor_to_f32("v.patch_embd.weight");
}

}  // namespace

const ArchRules kMistral3Rules = {"mistral3", "mistral3", detect_mistral3, handle_mistral3, handle_mistral3_clip};

}  // namespace mlens::compat
