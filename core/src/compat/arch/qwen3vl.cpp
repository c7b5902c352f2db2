// qwen3vl and qwen3vlmoe (spec §1.4 and §1.5): M-RoPE sections and deepstack count on the text side.
//
// handle_qwen3vl_clip (spec §1.5) for qwen3vl and qwen3vlmoe: KVs, the deepstack layer mask, the
// per-block Q/K/V merge dequantized to F32 (Ollama files mix F16 q/k with Q8_0 v), the patch-embed
// split, exact merger/deepstack renames and the per-block substring renames.
// <arch>.vision.deepstack_visual_indexes is read as int32 elements (the shim reads the raw data).
#include <algorithm>
#include <cmath>

#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

std::vector<int32_t> deepstack_indexes(PlanState& s, const std::string& key) {
    std::vector<int32_t> out;
    const Value* v = s.kv(key);
    if (!v) return out;
    if (auto elems = array_scalars(*v))
        for (const Scalar& e : *elems) out.push_back(static_cast<int32_t>(e.bits));
    return out;
}

Detection detect_qwen3vl(const PlanState& s, const std::string& arch) {
    if (arch != "qwen3vl" && arch != "qwen3vlmoe") return wrong_arch(arch, "qwen3vl or qwen3vlmoe");
    if (s.has_kv(arch + ".rope.dimension_sections")) return {false, arch + ".rope.dimension_sections present"};
    return {true, "marker: " + arch + ".rope.dimension_sections missing"};
}

void handle_qwen3vl(PlanState& s, std::string& arch) {
    s.set(arch + ".rope.dimension_sections", array_i32({24, 20, 20, 0}), "hard-coded Qwen3-VL-8B sections, whatever the model size");
    const Value* idx = s.kv(arch + ".vision.deepstack_visual_indexes");
    s.inject_u32(arch + ".n_deepstack_layers", static_cast<uint32_t>(idx ? array_count(*idx) : 0),
                 "length of " + arch + ".vision.deepstack_visual_indexes");
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::head_count, vision_key::layer_norm_epsilon, vision_key::block_count, vision_key::embedding_length,
    vision_key::num_channels, vision_key::patch_size, vision_key::spatial_merge_size,
    {"vision.temporal_patch_size", "clip.vision.temporal_patch_size", CopyAs::u32},
    {"vision.rope.freq_base", "clip.vision.rope.freq_base", CopyAs::f32},
    vision_key::projection_dim,
};
// clang-format on

// clang-format off
constexpr KeyCopy kImageKeys[] = {
    vision_key::image_mean, vision_key::image_std,
    {"vision.shortest_edge", "clip.vision.image_min_pixels", CopyAs::u32},
    {"vision.longest_edge", "clip.vision.image_max_pixels", CopyAs::u32},
};
// clang-format on

void handle_qwen3vl_clip(PlanState& s, const std::string& arch) {
    const std::string p = arch + ".";
    s.copy_keys(p, kClipKeys);
    s.inject_u32("clip.vision.num_channels", 3);
    s.inject_u32("clip.vision.temporal_patch_size", 2);
    s.inject_f32("clip.vision.rope.freq_base", 10000.0f);
    if (!s.has_kv("clip.vision.feed_forward_length"))
        if (auto fc1 = s.tensor("v.blk.0.mlp.linear_fc1.weight"); fc1 && s.slot(*fc1).ne.size() > 1)
            s.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(s.slot(*fc1).ne[1]),
                      "ne[1] of v.blk.0.mlp.linear_fc1.weight");
    if (!s.has_kv("clip.vision.image_size")) {
        auto pe = s.tensor("v.pos_embed.weight");
        if (pe && s.has_kv(p + "vision.patch_size")) {
            const uint32_t patch = s.read_u32(p + "vision.patch_size").value_or(0);
            const uint64_t positions = s.slot(*pe).ne.size() > 1 ? s.slot(*pe).ne[1] : 1;
            // √ of a u64 can reach 2^32; clamp so the conversion stays defined (u32 arithmetic wraps, as upstream's).
            const auto side = static_cast<uint32_t>(std::min(std::sqrt(static_cast<double>(positions)), 4294967295.0));
            s.set_u32("clip.vision.image_size", side * patch, "⌊√(positions of v.pos_embed.weight)⌋ × patch_size");
        }
    }
    s.copy_keys(p, kImageKeys);
    s.inject_u32("clip.vision.image_min_pixels", 65536);
    s.inject_u32("clip.vision.image_max_pixels", 16777216);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    const std::vector<int32_t> indexes = deepstack_indexes(s, p + "vision.deepstack_visual_indexes");
    if (!s.has_kv("clip.vision.is_deepstack_layers")) set_deepstack_layers(s, indexes, "true at each deepstack_visual_indexes entry");
    declare_vision_clip(s, "gelu", "qwen3vl_merger");

    const uint32_t blocks =
        s.block_span("v.blk.", s.has_kv("clip.vision.block_count") ? s.read_u32("clip.vision.block_count").value_or(0) : 27);
    for (uint32_t b = 0; b < blocks; ++b) merge_vision_qkv(s, b, true);
    int64_t c_in = 3;
    if (s.has_kv(p + "vision.num_channels")) c_in = s.read_u32(p + "vision.num_channels").value_or(0);
    split_patch_embed(s, c_in);

    s.rename_tensor("v.merger.norm.weight", "v.post_ln.weight");
    s.rename_tensor("v.merger.norm.bias", "v.post_ln.bias");
    s.rename_tensor("v.merger.linear_fc1.weight", "mm.0.weight");
    s.rename_tensor("v.merger.linear_fc1.bias", "mm.0.bias");
    s.rename_tensor("v.merger.linear_fc2.weight", "mm.2.weight");
    s.rename_tensor("v.merger.linear_fc2.bias", "mm.2.bias");
    s.rename_tensor("v.patch_embed.bias", "v.patch_embd.bias");
    s.rename_tensor("v.pos_embed.weight", "v.position_embd.weight");
    for (size_t i = 0; i < indexes.size(); ++i) {
        const std::string from = "v.deepstack_merger." + std::to_string(i) + ".";
        const std::string to = "v.deepstack." + std::to_string(indexes[i]) + ".";
        for (const auto& [leaf_from, leaf_to] : RenameList{{"norm", "norm"}, {"linear_fc1", "fc1"}, {"linear_fc2", "fc2"}})
            for (const char* suffix : {".weight", ".bias"}) s.rename_tensor(from + leaf_from + suffix, to + leaf_to + suffix);
    }
    rename_all_containing(s,
                          {
                              {".norm1", ".ln1"},
                              {".norm2", ".ln2"},
                              {".mlp.linear_fc1", ".ffn_up"},
                              {".mlp.linear_fc2", ".ffn_down"},
                          });
    s.promote_tensor_to_f32("v.position_embd.weight");
}

}  // namespace

const ArchRules kQwen3vlRules = {"qwen3vl", "qwen3vl, qwen3vlmoe", detect_qwen3vl, handle_qwen3vl, handle_qwen3vl_clip};

}  // namespace mlens::compat
