// handle_gemma3_clip (spec §1.5): SigLIP tower + gemma3 projector. The .mlp.fc1 → .ffn_down and
// .mlp.fc2 → .ffn_up renames are the legacy swapped convention; upstream clip.cpp swaps them back
// by shape (is_ffn_swapped), so the plan keeps them as the shim writes them.
#include "clip_handlers.h"

namespace mlens::compat {

void handle_gemma3_clip(PlanState& s) {
    s.copy_u32("gemma3.vision.block_count", "clip.vision.block_count");
    s.copy_u32("gemma3.vision.embedding_length", "clip.vision.embedding_length");
    s.copy_u32("gemma3.vision.feed_forward_length", "clip.vision.feed_forward_length");
    s.copy_u32("gemma3.vision.image_size", "clip.vision.image_size");
    s.copy_u32("gemma3.vision.patch_size", "clip.vision.patch_size");
    s.copy_u32("gemma3.vision.attention.head_count", "clip.vision.attention.head_count");
    s.copy_f32("gemma3.vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon");
    s.copy_u32("gemma3.embedding_length", "clip.vision.projection_dim");
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    s.inject_bool("clip.has_vision_encoder", true);
    s.inject_bool("clip.use_gelu", true);
    s.set_str("clip.projector_type", "gemma3");
    s.set_str("general.architecture", "clip");
    s.set_arch("clip");

    rename_all_containing(s, {
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

}  // namespace mlens::compat
