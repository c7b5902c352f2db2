// nemotron_h_omni and nemotron_h_moe (spec §1.4 and §1.5): the omni text side becomes nemotron_h or
// nemotron_h_moe (and then runs the moe rule itself); the latent MoE tensors get upstream's names.
//
// handle_nemotron_h_omni_clip (spec §1.5, nemotron_v2_vl). Audio is switched off
// (clip.has_audio_encoder = false); the projector type goes under clip.vision.projector_type.
//
// Position-embedding resample: params {E, P, T, layout} of DataOpKind::pos_embd_resample, layout
// per kPosLayout* (data_ops.h). AMBIGUOUS (spec): E is clip.vision.embedding_length when
// that key is present and nonzero, else the embedding size detected from the source shape; the
// shim's 3-D source layouts are reproduced as written although they do not obviously match
// ggml's memory order.
#include <cmath>

#include "compat/arch/arch_rules.h"
#include "compat/arch/clip_support.h"
#include "compat/arch/rule_support.h"
#include "mlens/compat/data_ops.h"

namespace mlens::compat {

namespace {

uint64_t scalar_uint(const PlanState& s, const std::string& key) {
    const Value* v = s.kv(key);
    return v && !v->is_array() && !v->is_string() ? v->scalar.as_uint() : 0;
}

uint64_t square_side(uint64_t n) {
    auto side = static_cast<uint64_t>(std::sqrt(static_cast<double>(n)));
    if (side * side == n) return side;
    if ((side + 1) * (side + 1) == n) return side + 1;
    return 0;
}

// (E, P) from the source dims as ggml_n_dims lists them; false when no layout matches.
bool position_layout(const std::vector<uint64_t>& shape, uint64_t& e, uint64_t& p) {
    if (shape.size() == 2) {
        if (square_side(shape[1])) return e = shape[0], p = shape[1], true;
        if (square_side(shape[0])) return e = shape[1], p = shape[0], true;
    } else if (shape.size() == 3) {
        if (shape[0] == 1 && square_side(shape[1])) return e = shape[2], p = shape[1], true;
        if (shape[2] == 1 && square_side(shape[1])) return e = shape[0], p = shape[1], true;
    }
    return false;
}

void resample_position_embedding(PlanState& s, uint64_t embd_kv, uint64_t target_side) {
    std::string src_name = s.tensor("v.position_embd") ? "v.position_embd" : "v.position_embd.weight";
    auto slot = s.tensor(src_name);
    if (!slot || target_side == 0) return;
    const std::vector<uint64_t> shape = trim_shape(s.slot(*slot).ne);
    uint64_t e = 0, p = 0;
    if (!position_layout(shape, e, p)) return;
    if (embd_kv != 0) e = embd_kv;
    if (e == 0 || square_side(p) == 0) return;
    int64_t layout = kPosLayoutOther;
    if (shape.size() == 2)
        layout = shape[0] == e ? kPosLayoutEmbdFastest : kPosLayoutPosFastest;
    else if (shape[0] == 1)
        layout = kPosLayout3dNe0One;
    if (src_name != "v.position_embd.weight") s.rename_slot(*slot, "v.position_embd.weight", "legacy name without .weight");
    s.set_shape(*slot, {e, target_side * target_side}, "resampled to the image grid");
    s.set_type(*slot, kTypeF32, "resampled in F32");
    s.add_data_op(make_op(DataOpKind::pos_embd_resample, *slot, {*slot},
                          {static_cast<int64_t>(e), static_cast<int64_t>(p), static_cast<int64_t>(target_side), layout},
                          "bilinear, align-corners, " + std::to_string(square_side(p)) + "² → " + std::to_string(target_side) + "²"));
}

void relabel_patch_embedding(PlanState& s, uint64_t patch, uint64_t channels, uint64_t embd) {
    auto slot = s.tensor("v.patch_embd.weight");
    if (!slot || patch == 0 || channels == 0 || embd == 0) return;
    const std::vector<uint64_t> shape = trim_shape(s.slot(*slot).ne);
    if (shape.size() != 2 || shape[0] != patch * patch * channels || shape[1] != embd) return;
    s.set_shape(*slot, {patch, patch, channels, embd}, "[P*P*C, E] relabelled as [P, P, C, E]");
    s.set_type(*slot, kTypeF32, "dequantized to F32");
    s.add_data_op(make_op(DataOpKind::dequant_to_f32, *slot, {*slot}, {}, "element order unchanged"));
}

Detection detect_nemotron_h_omni(const PlanState& s, const std::string& arch) {
    if (arch != "nemotron_h_omni") return wrong_arch(arch, "nemotron_h_omni");
    return Markers(s).prefix("v.").prefix("a.").prefix("mm.").any();
}

Detection detect_nemotron_h_moe(const PlanState& s, const std::string& arch) {
    if (arch != "nemotron_h_moe") return wrong_arch(arch, "nemotron_h_moe");
    return Markers(s).prefix("blk.1.ffn_latent_in").prefix("blk.0.ffn_latent_in").prefix("mtp.").any();
}

void handle_nemotron_h_moe(PlanState& s, std::string&) {
    if (!s.has_kv("nemotron_h_moe.moe_latent_size")) {
        for (uint32_t b = 0; b < 1024; ++b) {
            if (auto t = s.tensor("blk." + std::to_string(b) + ".ffn_latent_in.weight")) {
                s.set_u32("nemotron_h_moe.moe_latent_size", static_cast<uint32_t>(dim(s, *t, 1)), "ne[1] of " + s.slot(*t).name);
                break;
            }
        }
    }
    s.rename_tensors_containing(".ffn_latent_in", ".ffn_latent_down");
    s.rename_tensors_containing(".ffn_latent_out", ".ffn_latent_up");
    s.skip_prefix("mtp.");
}

void handle_nemotron_h_omni(PlanState& s, std::string& arch) {
    const bool moe = scalar_uint(s, "nemotron_h_omni.expert_count") > 0 || scalar_uint(s, "nemotron_h_omni.expert_used_count") > 0;
    const std::string text_arch = moe ? "nemotron_h_moe" : "nemotron_h";
    switch_arch(s, arch, text_arch);
    const std::string prefix = "nemotron_h_omni.";
    for (const std::string& key : s.keys()) {
        if (!key.starts_with(prefix)) continue;
        const std::string rest = key.substr(prefix.size());
        if (rest.starts_with("vision.") || rest.starts_with("audio.")) continue;
        s.copy_kv(key, text_arch + "." + rest, "omni text keys copied to " + text_arch + " (vision./audio. left out)");
    }
    s.skip_prefix("a.");
    hide_vision_tensors(s);
    if (!moe) return;
    Detection d = detect_nemotron_h_moe(s, arch);
    s.record_check("handle_nemotron_h_moe", "nemotron_h_moe (called by handle_nemotron_h_omni)", d);
    if (!d.fired) return;
    s.begin_rule("handle_nemotron_h_moe");
    handle_nemotron_h_moe(s, arch);
}

// clang-format off
constexpr KeyCopy kClipKeys[] = {
    vision_key::block_count, vision_key::embedding_length, vision_key::feed_forward_length, vision_key::head_count,
    vision_key::layer_norm_epsilon, vision_key::patch_size, vision_key::image_size, vision_key::num_channels,
    {"vision.projector.scale_factor", "clip.vision.projector.scale_factor", CopyAs::u32},
    vision_key::projection_dim, vision_key::image_mean, vision_key::image_std,
    {"vision.image_token_id", "clip.vision.image_token_id", CopyAs::any},
    {"vision.image_start_token_id", "clip.vision.image_start_token_id", CopyAs::any},
    {"vision.image_end_token_id", "clip.vision.image_end_token_id", CopyAs::any},
    {"vision.max_tiles", "clip.vision.max_tiles", CopyAs::any},
    {"vision.min_num_patches", "clip.vision.min_num_patches", CopyAs::any},
    {"vision.max_num_patches", "clip.vision.max_num_patches", CopyAs::any},
};
// clang-format on

void handle_nemotron_h_omni_clip(PlanState& s, const std::string&) {
    become_clip(s);
    const std::string p = "nemotron_h_omni.";
    s.copy_keys(p, kClipKeys);

    const std::optional<uint32_t> embd_kv = s.read_u32("clip.vision.embedding_length");
    const uint32_t image_size = s.read_u32("clip.vision.image_size").value_or(512);
    const uint32_t patch_size = s.read_u32("clip.vision.patch_size").value_or(16);
    const uint32_t embedding = embd_kv.value_or(1280);
    const uint32_t channels = s.read_u32("clip.vision.num_channels").value_or(3);
    const uint32_t target_side = patch_size > 0 ? image_size / patch_size : 0;

    s.inject_u32("clip.vision.block_count", 32);
    s.inject_u32("clip.vision.embedding_length", embedding);
    s.inject_u32("clip.vision.feed_forward_length", embedding * 4);
    s.inject_u32("clip.vision.attention.head_count", 16);
    s.inject_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
    s.inject_u32("clip.vision.patch_size", patch_size);
    s.inject_u32("clip.vision.image_size", image_size);
    s.inject_u32("clip.vision.num_channels", channels);
    s.inject_u32("clip.vision.projector.scale_factor", 2);
    s.copy_u32(p + "embedding_length", "clip.vision.projection_dim");
    inject_mean_std(s, {0.48145466f, 0.45782750f, 0.40821073f}, {0.26862954f, 0.26130258f, 0.27577711f});
    s.inject_bool("clip.has_vision_encoder", true);
    s.set_str("clip.vision.projector_type", "nemotron_v2_vl");
    s.inject_bool("clip.use_gelu", true);
    s.set("clip.has_audio_encoder", value_bool(false), "audio intentionally disabled");

    s.rename_tensor("v.cls_embd", "v.class_embd");
    s.promote_tensor_to_f32("v.class_embd");
    resample_position_embedding(s, embd_kv.value_or(0), target_side);
    relabel_patch_embedding(s, patch_size, channels, embedding);
    s.rename_tensor("mm.norm.weight", "mm.model.mlp.0.weight");
    s.rename_tensor("mm.1.weight", "mm.model.mlp.1.weight");
    s.rename_tensor("mm.2.weight", "mm.model.mlp.3.weight");
}

}  // namespace

const ArchRules kNemotronHOmniRules = {"nemotron_h_omni", "nemotron_h_omni", detect_nemotron_h_omni, handle_nemotron_h_omni,
                                       handle_nemotron_h_omni_clip};
const ArchRules kNemotronHMoeRules = {"nemotron_h_moe", "nemotron_h_moe", detect_nemotron_h_moe, handle_nemotron_h_moe, nullptr};

}  // namespace mlens::compat
