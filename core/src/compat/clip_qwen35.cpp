// handle_qwen35_like_clip (spec §1.5) for qwen35 and qwen35moe: KVs with the Qwen3.5-35B-A3B
// reference defaults, the per-block Q/K/V byte concat and the patch-embed split (both before the
// renames, since they find their sources by the stored names), then substring renames.
#include "clip_handlers.h"

namespace mlens::compat {

void handle_qwen35_like_clip(PlanState& s, const std::string& arch) {
    const std::string p = arch + ".";
    s.copy_u32(p + "vision.block_count", "clip.vision.block_count");
    s.copy_u32(p + "vision.embedding_length", "clip.vision.embedding_length");
    s.copy_u32(p + "vision.attention.head_count", "clip.vision.attention.head_count");
    s.copy_u32(p + "vision.patch_size", "clip.vision.patch_size");
    s.copy_u32(p + "vision.spatial_merge_size", "clip.vision.spatial_merge_size");
    s.copy_u32(p + "vision.num_channels", "clip.vision.num_channels");
    s.copy_u32(p + "embedding_length", "clip.vision.projection_dim");
    s.inject_u32("clip.vision.feed_forward_length", 4304);
    s.inject_u32("clip.vision.image_size", 768);
    s.inject_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    if (!s.has_kv("clip.vision.is_deepstack_layers")) set_deepstack_layers(s, {}, "one false per vision block");
    s.inject_bool("clip.has_vision_encoder", true);
    s.inject_bool("clip.use_gelu", true);
    s.set_str("clip.projector_type", "qwen3vl_merger");
    s.set_str("general.architecture", "clip");
    s.set_arch("clip");

    const uint32_t blocks = s.block_span("v.blk.", s.has_kv("clip.vision.block_count") ? s.read_u32("clip.vision.block_count").value_or(0) : 27);
    for (uint32_t b = 0; b < blocks; ++b) merge_vision_qkv(s, b, false);
    int64_t c_in = 3;
    if (s.has_kv("clip.vision.num_channels")) c_in = s.read_u32("clip.vision.num_channels").value_or(0);
    split_patch_embed(s, c_in);

    rename_all_containing(s, {
        {"v.pos_embed", "v.position_embd"},
        {"v.patch_embed", "v.patch_embd"},
        {"v.merger.norm", "v.post_ln"},
        {"v.merger.linear_fc1", "mm.0"},
        {"v.merger.linear_fc2", "mm.2"},
        {".mlp.linear_fc1", ".ffn_up"},
        {".mlp.linear_fc2", ".ffn_down"},
        {".norm1", ".ln1"},
        {".norm2", ".ln2"},
    });
    s.promote_tensor_to_f32("v.position_embd.weight");
}

}  // namespace mlens::compat
