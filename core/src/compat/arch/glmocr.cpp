// glmocr (spec §1.4 and §1.5): Ollama's name for a glm4 text model with fused gate‖up, and the
// glm4v clip side.
//
// handle_glmocr_clip (spec §1.5, glm4v): vision names already match upstream except the temporal
// patch-embed pair; image_mean/std are rewritten as FLOAT32 arrays from the glmocr.vision.* arrays
// (the shim copies the raw element bytes, so 4-byte elements are reinterpreted as floats).
#include <cstring>

#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

void copy_as_f32_array(PlanState& s, const std::string& src, const std::string& dst) {
    const Value* v = s.kv(src);
    if (!v || s.has_kv(dst)) return;
    auto elems = array_scalars(*v);
    auto element = array_element_type(*v);
    if (!elems || !element || value_type_size(*element) != 4) {
        s.issue(src + " is not an array of 4-byte numbers: its bytes cannot be rewritten as FLOAT32");
        return;
    }
    std::vector<float> out;
    for (const Scalar& e : *elems) {
        auto bits = static_cast<uint32_t>(e.bits);
        float f;
        std::memcpy(&f, &bits, 4);
        out.push_back(f);
    }
    s.set(dst, array_f32(out), "element bytes of " + src + " written as FLOAT32");
}

Detection detect_glmocr(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "glmocr"); }

void handle_glmocr(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "glm4");
    pad_sections(s, "glm4.rope.mrope_section", "glm4.rope.dimension_sections", false);
    if (!s.has_kv("glm4.rope.dimension_count"))
        if (auto kl = s.get_u32("glm4.attention.key_length")) s.set_u32("glm4.rope.dimension_count", *kl, "from glm4.attention.key_length");
    if (auto pre = s.get_str("tokenizer.ggml.pre"); pre && *pre != "chatglm-bpe") s.set_str("tokenizer.ggml.pre", "chatglm-bpe");
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
    hide_vision_tensors(s);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length,
    {"vision.intermediate_size", "clip.vision.feed_forward_length", CopyAs::u32},
    vision_key::head_count,
    {"vision.attention.layer_norm_rms_epsilon", "clip.vision.attention.layer_norm_epsilon", CopyAs::f32},
    vision_key::image_size, vision_key::patch_size, vision_key::spatial_merge_size,
    {"vision.out_hidden_size", "clip.vision.projection_dim", CopyAs::u32},
};
// clang-format on

void handle_glmocr_clip(PlanState& s, const std::string&) {
    s.copy_keys("glmocr.", kClipKeys);
    copy_as_f32_array(s, "glmocr.vision.image_mean", "clip.vision.image_mean");
    copy_as_f32_array(s, "glmocr.vision.image_std", "clip.vision.image_std");
    declare_vision_clip(s, "silu", "glm4v");

    adopt_patch_embd_pair(s);
}

}  // namespace

const ArchRules kGlmocrRules = {"glmocr", "glmocr", detect_glmocr, handle_glmocr, handle_glmocr_clip};

}  // namespace mlens::compat
