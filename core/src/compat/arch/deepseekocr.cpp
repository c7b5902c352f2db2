// deepseekocr (spec §1.4 and §1.5): Ollama's name for deepseek2-ocr, and its SAM + CLIP clip side.
//
// handle_deepseekocr_clip (spec §1.5): SAM (s.*) + CLIP (v.*) + projector (mm.*). The SAM prefix
// is moved with a true prefix rename (s. → v.sam.) because a substring rename would corrupt names
// like mm.layers; "seperator" is the upstream spelling.
#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_deepseekocr(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "deepseekocr"); }

void handle_deepseekocr(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "deepseek2-ocr");
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
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length,
    {"vision.head_count", "clip.vision.attention.head_count", CopyAs::u32},
    vision_key::image_size, vision_key::patch_size,
    {"sam.block_count", "clip.vision.sam.block_count", CopyAs::u32},
    {"sam.embedding_length", "clip.vision.sam.embedding_length", CopyAs::u32},
    {"sam.head_count", "clip.vision.sam.head_count", CopyAs::u32},
};
// clang-format on

void handle_deepseekocr_clip(PlanState& s, const std::string&) {
    s.copy_keys("deepseekocr.", kClipKeys);
    s.inject_u32("clip.vision.feed_forward_length", 64);
    s.inject_u32("clip.vision.projection_dim", 1280);
    s.inject_u32("clip.vision.projector.scale_factor", 1);
    s.inject_u32("clip.vision.window_size", 14);
    s.inject_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
    inject_mean_std(s, kHalfMeanStd, kHalfMeanStd);
    declare_vision_clip(s, "gelu", "deepseekocr");

    std::vector<size_t> sam;
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (s.slot(i).name.starts_with("s.")) sam.push_back(i);
    for (size_t i : sam) s.rename_slot(i, "v.sam." + s.slot(i).name.substr(2), "prefix s. → v.sam.");
    s.rename_tensor("v.sam.position_embd", "v.sam.pos_embd.weight");
    rename_all_containing(s,
                          {
                              {".self_attn.out_proj", ".attn_out"},
                              {".self_attn.qkv_proj", ".attn_qkv"},
                              {".layer_norm1", ".ln1"},
                              {".layer_norm2", ".ln2"},
                              {".mlp.fc1", ".ffn_up"},
                              {".mlp.fc2", ".ffn_down"},
                              {"v.pre_layrnorm", "v.pre_ln"},
                              {".attn.proj", ".attn.out"},
                              {".attn.rel_pos_h", ".attn.pos_h.weight"},
                              {".attn.rel_pos_w", ".attn.pos_w.weight"},
                              {".norm1", ".pre_ln"},
                              {".norm2", ".post_ln"},
                              {"mm.layers", "mm.model.fc"},
                              {"mm.image_newline", "v.image_newline"},
                              {"mm.view_seperator", "v.view_seperator"},
                          });
    s.promote_tensor_to_f32("v.patch_embd.weight");
    s.promote_tensor_to_f32("v.sam.patch_embd.weight");
    s.promote_tensor_to_f32("v.position_embd.weight");
}

}  // namespace

const ArchRules kDeepseekocrRules = {"deepseekocr", "deepseekocr", detect_deepseekocr, handle_deepseekocr, handle_deepseekocr_clip};

}  // namespace mlens::compat
