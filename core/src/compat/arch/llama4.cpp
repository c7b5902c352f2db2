// llama4 (spec §1.4 and §1.5): vision tensors hidden from the text side, and the llama4 clip side.
//
// handle_llama4_clip (spec §1.5): both clip.projector_type and clip.vision.projector_type are set;
// no dtype promotion.
#include <cmath>

#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_llama4(const PlanState& s, const std::string& arch) {
    if (arch != "llama4") return wrong_arch(arch, "llama4");
    return Markers(s).prefix("v.").prefix("mm.").any();
}

void handle_llama4(PlanState& s, std::string&) { hide_vision_tensors(s); }

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::feed_forward_length, vision_key::head_count,
    vision_key::image_size, vision_key::patch_size,
    {"vision.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", CopyAs::f32},
    vision_key::projection_dim,
};
// clang-format on

void handle_llama4_clip(PlanState& s, const std::string&) {
    s.copy_keys("llama4.", kClipKeys);

    uint32_t scale = 2;
    if (std::optional<float> ratio = s.read_f32("llama4.vision.pixel_shuffle_ratio"); ratio && *ratio > 0.0f) {
        // Decision: a ratio so small that round(1/ratio) does not fit in u32 (the shim's cast
        // is undefined there) keeps the default scale and is reported.
        const float rounded = std::round(1.0f / *ratio);
        if (!(rounded < 4294967296.0f)) {
            s.issue("llama4.vision.pixel_shuffle_ratio " + std::to_string(*ratio) +
                    " gives a scale factor beyond u32; the default 2 is kept");
        } else {
            scale = static_cast<uint32_t>(rounded);
            if (scale == 0) scale = 2;
        }
    }
    s.inject_u32("clip.vision.projector.scale_factor", scale);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    s.inject_bool("clip.has_vision_encoder", true);
    s.inject_bool("clip.use_gelu", true);
    s.set_str("clip.projector_type", "llama4");
    s.set_str("clip.vision.projector_type", "llama4");
    become_clip(s);

    s.rename_tensor("v.positional_embedding_vlm", "v.position_embd.weight");
    rename_all_containing(s,
                          {
                              {"v.vision_adapter.mlp.fc1", "mm.model.mlp.1"},
                              {"v.vision_adapter.mlp.fc2", "mm.model.mlp.2"},
                              {"mm.linear_1", "mm.model.fc"},
                              {"v.class_embedding", "v.class_embd"},
                              {"v.layernorm_post", "v.post_ln"},
                              {"v.layernorm_pre", "v.pre_ln"},
                              {"v.patch_embedding", "v.patch_embd"},
                              {".attn_output", ".attn_out"},
                              {".attn_norm", ".ln1"},
                              {".ffn_norm", ".ln2"},
                              {".mlp.fc1", ".ffn_up"},
                              {".mlp.fc2", ".ffn_down"},
                          });
}

}  // namespace

const ArchRules kLlama4Rules = {"llama4", "llama4", detect_llama4, handle_llama4, handle_llama4_clip};

}  // namespace mlens::compat
