// gemma4 (spec §1.4 and §1.5): the per-expert gate/up fuse on the text side, and the gemma4v
// vision / gemma4a audio clip side.
//
// handle_gemma4_clip (spec §1.5): gemma4v vision (names already match upstream; mean 0, std 1) and,
// when a.* tensors exist, the gemma4a audio encoder with its exact renames. The dispatch's early
// exit means a file without v.* tensors never gets here, so audio-only files stay untranslated.
#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

bool gemma4_has_sidecars(const PlanState& s, const std::string& b) {
    for (const char* suffix : {".ffn_gate_exps.scale", ".ffn_gate_exps.input_scale", ".ffn_up_exps.scale", ".ffn_up_exps.input_scale"})
        if (s.tensor(b + suffix)) return true;
    return false;
}

// The per-expert gate/up fuse of one gemma4 block; true when it fused.
bool gemma4_fuse_block(PlanState& s, uint32_t block) {
    const std::string b = "blk." + std::to_string(block);
    if (gemma4_has_sidecars(s, b)) return false;
    auto gate = s.tensor(b + ".ffn_gate_exps.weight");
    auto up = s.tensor(b + ".ffn_up_exps.weight");
    if (!gate || !up || s.tensor(b + ".ffn_gate_up_exps.weight")) return false;
    if (s.slot(*gate).type != s.slot(*up).type) return false;
    for (size_t i = 0; i < 3; ++i)
        if (dim(s, *gate, i) != dim(s, *up, i)) return false;
    const uint64_t n_expert = dim(s, *gate, 2);
    const auto& gate_bytes = s.model().tensors[*gate].n_bytes;
    const auto& up_bytes = s.model().tensors[*up].n_bytes;
    if (n_expert == 0 || !gate_bytes || gate_bytes != up_bytes || *gate_bytes % n_expert != 0) return false;
    const uint64_t n_embd = dim(s, *gate, 0), n_ff = dim(s, *gate, 1);
    s.rename_slot(*gate, b + ".ffn_gate_up_exps.weight", "gate and up experts fused");
    s.set_shape(*gate, {n_embd, 2 * n_ff, n_expert}, "fused gate/up: rows 0..n_ff-1 gate, n_ff..2n_ff-1 up per expert");
    DataOp op;
    op.op = DataOpKind::interleave_experts;
    op.dest = *gate;
    op.sources = {*gate, *up};
    op.params = {static_cast<int64_t>(n_expert)};
    op.note = "per expert: gate bytes, then up bytes";
    s.add_data_op(std::move(op));
    s.skip_prefix(b + ".ffn_up_exps.weight");
    return true;
}

Detection detect_gemma4(const PlanState& s, const std::string& arch) {
    if (arch != "gemma4") return wrong_arch(arch, "gemma4");
    return Markers(s)
        .prefix("a.")
        .prefix("v.")
        .prefix("mm.")
        .prefix("model.vision_tower.")
        .add("tokenizer.ggml.model == \"llama\"", [&s] { return s.get_str("tokenizer.ggml.model") == "llama"; })
        .any();
}

void handle_gemma4(PlanState& s, std::string&) {
    if (s.get_str("tokenizer.ggml.model") == "llama")
        s.set_str("tokenizer.ggml.model", "gemma4", "BPE with the file's merges and pre gemma4");
    for (const char* p : {"a.", "v.", "mm.", "model.vision_tower."}) s.skip_prefix(p);
    const uint32_t blocks = s.block_span("blk.", s.get_u32("gemma4.block_count").value_or(0));
    bool fused = false;
    for (uint32_t b = 0; b < blocks; ++b) {
        fused |= gemma4_fuse_block(s, b);
        const std::string blk = "blk." + std::to_string(b);
        s.rename_tensor(blk + ".ffn_gate_inp.per_expert_scale", blk + ".ffn_down_exps.scale");
    }
    if (fused) s.disable_mmap();
}

// clang-format off
constexpr KeyCopy kVisionKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::feed_forward_length, vision_key::head_count,
    vision_key::layer_norm_epsilon, vision_key::patch_size,
};
// clang-format on

// clang-format off
constexpr KeyCopy kAudioKeys[] = {
    {"audio.block_count", "clip.audio.block_count", CopyAs::u32},
    {"audio.embedding_length", "clip.audio.embedding_length", CopyAs::u32},
    {"audio.feed_forward_length", "clip.audio.feed_forward_length", CopyAs::u32},
    {"audio.attention.head_count", "clip.audio.attention.head_count", CopyAs::u32},
    {"audio.attention.layer_norm_epsilon", "clip.audio.attention.layer_norm_epsilon", CopyAs::f32},
};
// clang-format on

void handle_gemma4_clip(PlanState& s, const std::string&) {
    become_clip(s);
    const bool has_vision = s.any_tensor_prefix("v.");
    const bool has_audio = s.any_tensor_prefix("a.");
    if (has_vision) {
        s.copy_keys("gemma4.", kVisionKeys);
        s.inject_u32("clip.vision.image_size", 224);
        s.copy_u32("gemma4.embedding_length", "clip.vision.projection_dim");
        inject_mean_std(s, {0.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 1.0f});
        s.inject_bool("clip.has_vision_encoder", true);
        s.set_str("clip.vision.projector_type", "gemma4v");
        s.promote_tensor_to_f32("v.patch_embd.weight");
    }
    if (!has_audio) return;
    s.copy_keys("gemma4.", kAudioKeys);
    s.inject_u32("clip.audio.num_mel_bins", 128);
    s.copy_u32("gemma4.embedding_length", "clip.audio.projection_dim");
    s.inject_bool("clip.has_audio_encoder", true);
    s.set_str("clip.audio.projector_type", "gemma4a");
    s.rename_tensor("a.pre_encode.out.weight", "a.input_projection.weight");
    s.rename_tensor("mm.a.fc.weight", "a.pre_encode.out.weight");
    s.rename_tensor("mm.a.fc.bias", "a.pre_encode.out.bias");
    const uint32_t blocks =
        s.block_span("a.blk.", s.has_kv("gemma4.audio.block_count") ? s.read_u32("gemma4.audio.block_count").value_or(0) : 12);
    for (uint32_t il = 0; il < blocks; ++il) {
        const std::string p = "a.blk." + std::to_string(il) + ".";
        s.rename_tensor(p + "ln1.weight", p + "attn_pre_norm.weight");
        s.rename_tensor(p + "ln2.weight", p + "attn_post_norm.weight");
        s.rename_tensor(p + "layer_pre_norm.weight", p + "ln2.weight");
        s.rename_tensor(p + "linear_pos.weight", p + "attn_k_rel.weight");
    }
}

}  // namespace

const ArchRules kGemma4Rules = {"gemma4", "gemma4", detect_gemma4, handle_gemma4, handle_gemma4_clip};

}  // namespace mlens::compat
