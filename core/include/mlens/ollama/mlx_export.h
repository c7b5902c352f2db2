// The tensors of a tensor-blob store model as an MLX folder that mlx-lm loads: quantized tensors
// kept bit for bit, in MLX's names, with the quantization described in config.json.
//
// Contract (names and layout as mlx_lm.utils.load_model and nn.QuantizedLinear / SwitchLinear
// read them):
//  - A quantized tensor "<P>.weight" (ollama-store.md §4.3) becomes "<P>.weight" (the packed U32
//    words as stored: element j of a word in bits [bits*j, bits*j + bits), which is MLX's own
//    packing), "<P>.scales" (its T.scale entry as stored: BF16/F16 for affine, U8 E4M3 for nvfp4,
//    U8 E8M0 for mxfp4/mxfp8) and, affine only, "<P>.biases" (T.bias as stored). A name without
//    ".weight" keeps its name as P. Unquantized tensors are copied as stored.
//  - Decision: an nvfp4 tensor with a global scale has no place in MLX's QuantizedLinear (it
//    reads weight, scales and biases only), so it is written dequantized as BF16 under its name,
//    and config.json's quantization maps its path to false (kept unquantized by mlx-lm).
//  - Experts: mlx-lm's MoE models hold experts stacked as "<layer>.<block>.switch_mlp.<proj>"
//    [E, out, in/pack]. A group named "...<block>.experts" or "...<block>.switch_mlp" is written
//    as "...<block>.switch_mlp.<rest>": stacked members keep their bytes, per-expert members
//    (the 2026-02 layout) are stacked here (their bytes concatenated in expert order, weight,
//    scales and biases alike; every expert must have the same type, group size, dtype and shape,
//    else E_EXPERT_LAYOUT). Single unstacked (shared) experts keep their names.
//  - config.json: the model's config.json layer with "quantization" and "quantization_config"
//    set to {"group_size", "bits", "mode"} of the most common (type, group size) among the
//    quantized paths (first met on a tie), plus "<P>": {"group_size", "bits", "mode"} for every
//    path quantized otherwise and "<P>": false for the dequantized ones — mlx-lm's per-layer
//    form. Written with 4-space indentation, keys in their order. No config.json layer is
//    E_EXPORT.
//  - Shards and index as hf_export.h (shard_tensors); the HfPlan's tensors are copies except the
//    dequantized ones (dtype BF16).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlens/model/model.h"
#include "mlens/ollama/hf_export.h"

namespace mlens {

struct MlxPlan {
    HfPlan layout;
    std::string config_json;
    std::vector<std::string> notes;
};

Result<MlxPlan> plan_mlx_export(const Model& model, uint64_t shard_limit = kHfShardBytes);

// The name plan_mlx_export gives the stacked tensor `name` of expert group `group`
// ("<block>.switch_mlp.<part>"), or nullopt for a group mlx-lm does not stack (shared experts).
std::optional<std::string> mlx_stacked_name(const std::string& name, const std::string& group);

}  // namespace mlens
