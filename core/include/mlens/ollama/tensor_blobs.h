// Safetensors tensor blobs of Ollama's MLX engine (ollama-store.md §4): how a Model read from
// them is given its logical view — quantized tensors combined from their entries, and expert
// groups in every layout Ollama has written.
//
// Contract:
//  - Quant params (x/quant/quant.go): int4 g64 4-bit affine, int8 g64 8-bit affine, nvfp4 g16,
//    mxfp4 g32, mxfp8 g32; values per U32 = 32 / bits. normalize_quant_type uppercases a declared
//    type and maps the aliases Q4/INT4/FP4 -> int4 and Q8/INT8/FP8 -> int8 ("FP8" is int8 affine,
//    not E4M3); anything else non-empty is unknown.
//  - describe_quantized_tensors: an entry T of dtype U32 with an entry T.scale is a quantized
//    tensor. Its companions are T.scale, T.bias (the affine zero-point) and T.global_scale,
//    looked up by name across the whole Model (Ollama loads all blobs into one map). T gets
//    TensorInfo::quant, each companion part_of = T; every entry stays in Model::tensors.
//    Type and group size come, in this order, from T's blob __metadata__ "<T>.quant_type" /
//    "<T>.group_size", then the blob-wide "quant_type" / "group_size", then (group size only)
//    the table. Without any quant_type, the type is inferred from the shapes: with U8 scales
//    (fp modes) packed_cols*8/scale_cols of 16, 32 or 64 means nvfp4, mxfp4 or mxfp8; otherwise
//    Ollama's rule in x/mlxrunner/model/root.go (r4 = packed_cols*8/scale_cols,
//    r8 = packed_cols*4/scale_cols: r4 == 32 int4/32, r8 == 64 int8/64, r4 == 64 ambiguous and
//    decided by bits_hint (8: int8/32, 4: int4/64), else whichever of r4, r8 alone is in
//    {16, 32, 64, 128}). Decision: an ambiguous shape with no hint is read as int4/64, the
//    current default, with W_QUANT_AMBIGUOUS. Unknown declared types take Ollama's fallback
//    (8-bit affine, group 32) with W_UNKNOWN_QUANT_TYPE; an undecidable shape W_QUANT_UNKNOWN.
//    logical_ne is ne with ne[0] x values-per-U32 (checked). Shape disagreements between T, its
//    scale and the group size are W_QUANT_SHAPE_MISMATCH; an affine tensor without T.bias
//    W_QUANT_MISSING_BIAS. A name present twice is W_DUPLICATE_TENSOR_NAME (the first is used).
//  - find_expert_groups: a non-companion entry whose name ends ".weight" and contains one of
//    .mlp.experts. .mlp.shared_experts. .mlp.switch_mlp. .moe.experts. .mixer.experts.
//    .mixer.shared_experts. after a layer prefix matching Ollama's ExpertGroupPrefix rule
//    (optionally behind "draft.") belongs to the group named by that prefix plus the marker.
//    Members "<group>.<i>.<part>.weight" are per-expert (count = distinct indices); others are
//    stacked, with the expert count the leading (slowest) dimension of a 3-D tensor, or a single
//    unstacked (shared) expert when 2-D. The layout names the historical format when blob
//    names tell it: per-expert tensors in one group blob (2026-02 to 2026-03); switch_mlp tensors
//    stacked into a blob still named "...mlp.experts" (2026-03 to 2026-07); stacked into one
//    group blob or one blob per tensor (current). Disagreeing expert counts give
//    W_EXPERT_COUNT_MISMATCH.
//  - blob_names[i] is the manifest layer name of Model file i ("" when unknown). Diagnostics have
//    format "store", the tensor's name as field and its file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

struct QuantParams {
    const char* type;  // "int4", ...
    const char* mode;  // "affine", "nvfp4", "mxfp4", "mxfp8"
    uint32_t bits;
    uint64_t group_size;  // default
};

// The table row of a normalized type, or nullptr.
const QuantParams* quant_params(std::string_view type);
std::optional<std::string> normalize_quant_type(std::string_view declared);

void describe_quantized_tensors(Model& model, std::optional<uint32_t> bits_hint = std::nullopt);
void find_expert_groups(Model& model, const std::vector<std::string>& blob_names = {});

// Both, in order.
void describe_tensor_blobs(Model& model, const std::vector<std::string>& blob_names = {}, std::optional<uint32_t> bits_hint = std::nullopt);

}  // namespace mlens
