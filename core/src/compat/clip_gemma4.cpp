// handle_gemma4_clip (spec §1.5): gemma4v vision (names already match upstream; mean 0, std 1) and,
// when a.* tensors exist, the gemma4a audio encoder with its exact renames. The dispatch's early
// exit means a file without v.* tensors never gets here, so audio-only files stay untranslated.
#include "clip_handlers.h"

namespace mlens::compat {

void handle_gemma4_clip(PlanState& s) {
    s.set_str("general.architecture", "clip");
    s.set_arch("clip");
    const bool has_vision = s.any_tensor_prefix("v.");
    const bool has_audio = s.any_tensor_prefix("a.");
    if (has_vision) {
        s.copy_u32("gemma4.vision.block_count", "clip.vision.block_count");
        s.copy_u32("gemma4.vision.embedding_length", "clip.vision.embedding_length");
        s.copy_u32("gemma4.vision.feed_forward_length", "clip.vision.feed_forward_length");
        s.copy_u32("gemma4.vision.attention.head_count", "clip.vision.attention.head_count");
        s.copy_f32("gemma4.vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon");
        s.copy_u32("gemma4.vision.patch_size", "clip.vision.patch_size");
        s.inject_u32("clip.vision.image_size", 224);
        s.copy_u32("gemma4.embedding_length", "clip.vision.projection_dim");
        inject_mean_std(s, {0.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 1.0f});
        s.inject_bool("clip.has_vision_encoder", true);
        s.set_str("clip.vision.projector_type", "gemma4v");
        s.promote_tensor_to_f32("v.patch_embd.weight");
    }
    if (!has_audio) return;
    s.copy_u32("gemma4.audio.block_count", "clip.audio.block_count");
    s.copy_u32("gemma4.audio.embedding_length", "clip.audio.embedding_length");
    s.copy_u32("gemma4.audio.feed_forward_length", "clip.audio.feed_forward_length");
    s.copy_u32("gemma4.audio.attention.head_count", "clip.audio.attention.head_count");
    s.copy_f32("gemma4.audio.attention.layer_norm_epsilon", "clip.audio.attention.layer_norm_epsilon");
    s.inject_u32("clip.audio.num_mel_bins", 128);
    s.copy_u32("gemma4.embedding_length", "clip.audio.projection_dim");
    s.inject_bool("clip.has_audio_encoder", true);
    s.set_str("clip.audio.projector_type", "gemma4a");
    s.rename_tensor("a.pre_encode.out.weight", "a.input_projection.weight");
    s.rename_tensor("mm.a.fc.weight", "a.pre_encode.out.weight");
    s.rename_tensor("mm.a.fc.bias", "a.pre_encode.out.bias");
    const uint32_t blocks = s.block_span("a.blk.", s.has_kv("gemma4.audio.block_count") ? s.read_u32("gemma4.audio.block_count").value_or(0) : 12);
    for (uint32_t il = 0; il < blocks; ++il) {
        const std::string p = "a.blk." + std::to_string(il) + ".";
        s.rename_tensor(p + "ln1.weight", p + "attn_pre_norm.weight");
        s.rename_tensor(p + "ln2.weight", p + "attn_post_norm.weight");
        s.rename_tensor(p + "layer_pre_norm.weight", p + "ln2.weight");
        s.rename_tensor(p + "linear_pos.weight", p + "attn_k_rel.weight");
    }
}

}  // namespace mlens::compat
