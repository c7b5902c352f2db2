// qwen25vl (spec §1.4 and §1.5): Ollama's name for qwen2vl text, and the qwen2.5vl_merger clip side.
//
// handle_qwen25vl_clip (spec §1.5, qwen2.5vl_merger). clip.vision.n_wa_pattern is
// fullatt_block_indexes[0] + 1 (the first element read as int32, as the shim reads the raw array
// data) when that array is non-empty, else 8 is injected.
#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_qwen25vl(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "qwen25vl"); }

void handle_qwen25vl(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "qwen2vl");
    pad_sections(s, "qwen2vl.rope.mrope_section", "qwen2vl.rope.dimension_sections", true);
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::head_count, vision_key::layer_norm_epsilon, vision_key::block_count, vision_key::embedding_length,
    vision_key::num_channels, vision_key::patch_size, vision_key::spatial_merge_size,
    {"vision.window_size", "clip.vision.window_size", CopyAs::u32},
    vision_key::projection_dim,
};
// clang-format on

void handle_qwen25vl_clip(PlanState& s, const std::string&) {
    s.copy_keys("qwen25vl.", kClipKeys);
    if (!s.has_kv("clip.vision.feed_forward_length"))
        if (auto up = s.tensor("v.blk.0.ffn_up.weight"); up && s.slot(*up).ne.size() > 1)
            s.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(s.slot(*up).ne[1]), "ne[1] of v.blk.0.ffn_up.weight");
    const Value* full = s.kv("qwen25vl.vision.fullatt_block_indexes");
    auto first = full ? array_scalars(*full) : std::nullopt;
    if (first && !first->empty())
        s.set_u32("clip.vision.n_wa_pattern", static_cast<uint32_t>(static_cast<int32_t>((*first)[0].bits) + 1),
                  "fullatt_block_indexes[0] + 1");
    else
        s.inject_u32("clip.vision.n_wa_pattern", 8);
    s.inject_u32("clip.vision.image_size", 560);
    inject_mean_std(s, kClipMean, kClipStd);
    declare_vision_clip(s, "silu", "qwen2.5vl_merger");

    s.rename_tensor("v.merger.ln_q.weight", "v.post_ln.weight");
    s.rename_tensor("v.merger.mlp.0.weight", "mm.0.weight");
    s.rename_tensor("v.merger.mlp.0.bias", "mm.0.bias");
    s.rename_tensor("v.merger.mlp.2.weight", "mm.2.weight");
    s.rename_tensor("v.merger.mlp.2.bias", "mm.2.bias");
    adopt_patch_embd_pair(s);
}

}  // namespace

const ArchRules kQwen25vlRules = {"qwen25vl", "qwen25vl", detect_qwen25vl, handle_qwen25vl, handle_qwen25vl_clip};

}  // namespace mlens::compat
