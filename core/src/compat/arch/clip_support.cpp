#include "compat/arch/clip_support.h"

#include <algorithm>

namespace mlens::compat {

const std::vector<float> kHalfMeanStd = {0.5f, 0.5f, 0.5f};
const std::vector<float> kClipMean = {0.48145466f, 0.4578275f, 0.40821073f};
const std::vector<float> kClipStd = {0.26862954f, 0.26130258f, 0.27577711f};

void become_clip(PlanState& s) {
    s.set_str("general.architecture", "clip");
    s.set_arch("clip");
}

void declare_vision_clip(PlanState& s, const std::string& activation, const std::string& projector_type) {
    s.inject_bool("clip.has_vision_encoder", true);
    s.inject_bool("clip.use_" + activation, true);
    s.set_str("clip.projector_type", projector_type);
    become_clip(s);
}

void rename_all_containing(PlanState& s, const RenameList& renames) {
    for (const auto& [from, to] : renames) s.rename_tensors_containing(from, to);
}

void inject_mean_std(PlanState& s, const std::vector<float>& mean, const std::vector<float>& std_dev) {
    s.inject("clip.vision.image_mean", array_f32(mean));
    s.inject("clip.vision.image_std", array_f32(std_dev));
}

DataOp make_op(DataOpKind kind, size_t dest, std::vector<size_t> sources, std::vector<int64_t> params, std::string note) {
    DataOp op;
    op.op = kind;
    op.dest = dest;
    op.sources = std::move(sources);
    op.params = std::move(params);
    op.note = std::move(note);
    return op;
}

namespace {

// One concat of q‖k‖v (weight or bias) into q's slot; `widen` says which axis triples.
void merge_one(PlanState& s, const std::string& prefix, const std::string& leaf, bool to_f32, bool weight) {
    auto q = s.tensor(prefix + "attn_q." + leaf);
    if (!q) return;
    auto k = s.tensor(prefix + "attn_k." + leaf);
    auto v = s.tensor(prefix + "attn_v." + leaf);
    const std::string dest = prefix + "attn_qkv." + leaf;
    if (k && v) {
        s.add_data_op(make_op(to_f32 ? DataOpKind::concat_to_f32 : DataOpKind::byte_concat, *q, {*q, *k, *v}, {},
                              to_f32 ? "q‖k‖v, each dequantized to F32" : "q‖k‖v stored bytes (all of q's type)"));
    } else {
        s.issue("cannot register the concat of " + dest + ": attn_k or attn_v is missing (the load would fail)");
    }
    s.rename_slot(*q, dest, "Q/K/V merge: attn_q's slot becomes attn_qkv");
    std::vector<uint64_t> ne = s.slot(*q).ne;
    ne.resize(std::max<size_t>(ne.size(), weight ? 2 : 1), 1);
    ne[weight ? 1 : 0] *= 3;
    s.set_shape(*q, ne, "three times the rows of attn_q");
    if (to_f32) s.set_type(*q, kTypeF32, "merged in F32");
}

}  // namespace

void merge_vision_qkv(PlanState& s, uint32_t block, bool to_f32) {
    const std::string prefix = "v.blk." + std::to_string(block) + ".";
    if (!s.tensor(prefix + "attn_q.weight")) return;
    merge_one(s, prefix, "weight", to_f32, true);
    merge_one(s, prefix, "bias", to_f32, false);
}

void set_deepstack_layers(PlanState& s, const std::vector<int32_t>& deepstack, const std::string& note) {
    const uint32_t n = s.read_u32("clip.vision.block_count").value_or(0);
    if (n == 0) return;
    if (n > kMaxDeepstackBlocks) {
        s.issue("clip.vision.block_count " + std::to_string(n) + " exceeds " + std::to_string(kMaxDeepstackBlocks) +
                ": clip.vision.is_deepstack_layers is not built");
        return;
    }
    std::vector<bool> mask(n, false);
    for (int32_t i : deepstack)
        if (i >= 0 && static_cast<uint32_t>(i) < n) mask[static_cast<size_t>(i)] = true;
    s.set("clip.vision.is_deepstack_layers", array_bool(mask), note);
}

void adopt_patch_embd_pair(PlanState& s) {
    s.rename_tensor("v.patch_embd_0.weight", "v.patch_embd.weight");
    s.rename_tensor("v.patch_embd_1.weight", "v.patch_embd.weight.1");
    s.promote_tensor_to_f32("v.patch_embd.weight");
    s.promote_tensor_to_f32("v.patch_embd.weight.1");
}

void split_patch_embed(PlanState& s, int64_t c_in) {
    const std::string src_name = "v.patch_embed.weight";
    auto src = s.tensor(src_name);
    if (!src) return;
    const PlanState::Slot slot = s.slot(*src);
    if (slot.type != kTypeF16) {
        s.issue(src_name + " is not F16: the patch-embed split is not registered");
        return;
    }
    std::vector<uint64_t> ne = slot.ne;
    ne.resize(std::max<size_t>(ne.size(), 4), 1);
    const int64_t w = static_cast<int64_t>(ne[0]), h = static_cast<int64_t>(ne[1]);
    const int64_t frames = static_cast<int64_t>(ne[2]), packed = static_cast<int64_t>(ne[3]);
    if (c_in <= 0 || w <= 0 || h <= 0 || frames != 2 || packed % c_in != 0) {
        s.issue(src_name + " has an unsupported shape for the patch-embed split (needs [W,H,2,C_out*C_in])");
        return;
    }
    const uint64_t c_out = static_cast<uint64_t>(packed / c_in);
    const std::vector<uint64_t> dest_ne = {ne[0], ne[1], static_cast<uint64_t>(c_in), c_out};
    s.rename_slot(*src, "v.patch_embd.weight", "patch-embed temporal slice 0");
    s.set_shape(*src, dest_ne, "Conv3D split into Conv2D [W,H,C_in,C_out]");
    s.set_type(*src, kTypeF32, "split slices are F32");
    s.add_data_op(make_op(DataOpKind::patch_split, *src, {*src}, {0, frames, c_in}, "temporal slice 0, permuted, F16→F32"));
    if (s.reclaim_slot_as("v.blk.0.attn_k.weight", "v.patch_embd.weight.1", dest_ne, kTypeF32,
                          "reclaimed slot of v.blk.0.attn_k.weight (orphaned by the Q/K/V merge)")) {
        size_t slot1 = *s.tensor("v.patch_embd.weight.1");
        s.add_data_op(make_op(DataOpKind::patch_split, slot1, {*src}, {1, frames, c_in}, "temporal slice 1, permuted, F16→F32"));
    }
}

}  // namespace mlens::compat
