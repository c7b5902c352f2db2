// Helpers the clip-side handlers of translate_clip_metadata (spec §1.5) share. Every handler
// works on a PlanState over the *original* metadata (the shim opens the file a second time) and follows the shim's statement order, because a set moves its key to the
// end of the KV list and the order of renames decides the resulting names.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compat/plan_state.h"

namespace mlens::compat {

// The key copies clip handlers share: <arch>.vision.X to clip.vision.X, read with the type
// llama.cpp's clip loader asks for; the projection width is the text side's embedding_length.
// A handler lists them in its own statement order, with its own copies between them.
namespace vision_key {
inline constexpr KeyCopy block_count = {"vision.block_count", "clip.vision.block_count", CopyAs::u32};
inline constexpr KeyCopy embedding_length = {"vision.embedding_length", "clip.vision.embedding_length", CopyAs::u32};
inline constexpr KeyCopy feed_forward_length = {"vision.feed_forward_length", "clip.vision.feed_forward_length", CopyAs::u32};
inline constexpr KeyCopy head_count = {"vision.attention.head_count", "clip.vision.attention.head_count", CopyAs::u32};
inline constexpr KeyCopy layer_norm_epsilon = {"vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon",
                                               CopyAs::f32};
inline constexpr KeyCopy image_size = {"vision.image_size", "clip.vision.image_size", CopyAs::u32};
inline constexpr KeyCopy patch_size = {"vision.patch_size", "clip.vision.patch_size", CopyAs::u32};
inline constexpr KeyCopy num_channels = {"vision.num_channels", "clip.vision.num_channels", CopyAs::u32};
inline constexpr KeyCopy spatial_merge_size = {"vision.spatial_merge_size", "clip.vision.spatial_merge_size", CopyAs::u32};
inline constexpr KeyCopy image_mean = {"vision.image_mean", "clip.vision.image_mean", CopyAs::any};
inline constexpr KeyCopy image_std = {"vision.image_std", "clip.vision.image_std", CopyAs::any};
inline constexpr KeyCopy projection_dim = {"embedding_length", "clip.vision.projection_dim", CopyAs::u32};
}  // namespace vision_key

// general.architecture becomes clip (a set: it moves to the end), and so does the loader's name.
void become_clip(PlanState& s);
// The closing statements of a vision-only clip handler: clip.has_vision_encoder, clip.use_<activation>
// (gelu or silu), clip.projector_type, then become_clip.
void declare_vision_clip(PlanState& s, const std::string& activation, const std::string& projector_type);

using RenameList = std::vector<std::pair<const char*, const char*>>;
// rename_tensors_containing for every pair, in list order.
void rename_all_containing(PlanState& s, const RenameList& renames);

// inject_f32_arr_if_missing for clip.vision.image_mean / image_std.
void inject_mean_std(PlanState& s, const std::vector<float>& mean, const std::vector<float>& std_dev);
extern const std::vector<float> kHalfMeanStd;  // [0.5, 0.5, 0.5]
extern const std::vector<float> kClipMean;  // [0.48145466, 0.4578275, 0.40821073]
extern const std::vector<float> kClipStd;  // [0.26862954, 0.26130258, 0.27577711]

DataOp make_op(DataOpKind kind, size_t dest, std::vector<size_t> sources, std::vector<int64_t> params = {}, std::string note = {});

// The per-block Q/K/V merge into v.blk.b.attn_qkv.{weight,bias}: q's slot is renamed and widened
// along its slow axis; `to_f32` selects concat_to_f32 (qwen3vl) over byte_concat (qwen35).
void merge_vision_qkv(PlanState& s, uint32_t block, bool to_f32);
// Sets clip.vision.is_deepstack_layers to one bool per vision block (clip.vision.block_count),
// true at each index in `deepstack` that is inside. Decision: a block count above
// kMaxDeepstackBlocks (no model comes near it; the shim would allocate the array regardless)
// builds nothing and is reported as an issue, so a hostile count cannot allocate gigabytes.
constexpr uint32_t kMaxDeepstackBlocks = 1u << 16;
void set_deepstack_layers(PlanState& s, const std::vector<int32_t>& deepstack, const std::string& note);

// The patch embedding Ollama already split in two (v.patch_embd_0/_1.weight) takes upstream's
// names, v.patch_embd.weight and v.patch_embd.weight.1, both promoted to F32.
void adopt_patch_embd_pair(PlanState& s);

// The Conv3D patch-embed split of v.patch_embed.weight (F16 [W,H,2,C_out*C_in]) into
// v.patch_embd.weight and the reclaimed v.blk.0.attn_k.weight slot as v.patch_embd.weight.1, both
// F32 [W,H,C_in,C_out]. `c_in` is the channel count the handler read (default 3).
void split_patch_embed(PlanState& s, int64_t c_in);

}  // namespace mlens::compat
