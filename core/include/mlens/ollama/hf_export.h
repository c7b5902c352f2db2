// The tensors of a tensor-blob store model as a Hugging Face checkpoint: names, dtypes, shards,
// the bytes of each shard, and the check of a written folder against the store model.
//
// Contract:
//  - One HF tensor per logical tensor (logical_tensors.h), except stacked expert tensors, which
//    are unpacked: a member of an expert group whose logical shape is [E, out, in] becomes E
//    tensors "<group>.<e>.<rest>" (rest = the name after the group name), with a group named
//    "...switch_mlp" (the 2026-03 to 2026-07 layout) renamed "...experts", the name Hugging Face
//    checkpoints use. Per-expert members ("<group>.<e>.<part>.weight") and single unstacked
//    experts keep their names. Every layout find_expert_groups knows thus ends in per-expert
//    names.
//  - Quantized tensors are dequantized with TensorView (ModelLens's decoding, global scale
//    applied) and rounded to the dtype (round to nearest even; F32 keeps them exactly). Plain
//    F16 / BF16 / F32 / F64 tensors keep their own dtype, copied as stored, unless a dtype is
//    asked for (--dtype), when they are converted to it the same way: the default is lossless
//    for every tensor that is not quantized. Any other dtype (integers, U8) is copied as stored.
//  - The dtype of dequantized tensors is the one asked for, else config.json's "torch_dtype" (or
//    "dtype", also under text_config) when it names bfloat16, float16 or float32, else bf16.
//  - config.json, when the model has one, is written as what the folder holds: its
//    "quantization" and "quantization_config" blocks (top level and under text_config) removed,
//    since no tensor is quantized any more, and "torch_dtype" (where it was, else at the top)
//    set to the floating dtype holding the most tensor bytes. Its keys keep their order.
//  - Shards: tensors in logical order, a new shard when the next tensor would take the current
//    one past kHfShardBytes of tensor data. Each shard's header is safetensors_header_text of
//    its tensors with __metadata__ {"format":"pt"}, as transformers writes it.
//  - write_hf_shard streams a shard into a writer in chunks of at most ~4 MiB of values.
//  - verify_hf_export re-opens the folder (open_safetensors_folder) and checks each tensor's name,
//    dtype and shape, then its values: bit-equal to ModelLens's dequantization rounded to the dtype
//    (copies: byte-equal). Per quantization mode ("int4 g64", ..., "plain BF16") it records the
//    tensors, whether every value was exact (equal to the unrounded dequantized value) and the
//    worst |rounded - exact|.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlens/analysis/name_map.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

inline constexpr uint64_t kHfShardBytes = 5'000'000'000ull;  // transformers' max_shard_size "5GB"

enum class HfDtype { bf16, f16, f32 };
const char* hf_dtype_name(HfDtype dtype);  // "BF16", "F16", "F32"
std::optional<HfDtype> parse_hf_dtype(const std::string& text);  // "bf16", "f16", "f32"

struct HfTensor {
    std::string name;  // Hugging Face name
    size_t entry = 0;  // Model::tensors index of the logical tensor
    std::vector<size_t> sources;  // copies: the entries whose stored bytes, concatenated, it is
    std::optional<uint64_t> expert;  // slice of a stacked tensor
    std::string source_type;  // "int4 g64", "BF16", ...
    std::string mode;  // what the verification groups it under: "int4 g64", "plain BF16"
    bool converted = false;  // values decoded and rounded to the dtype; else bytes copied
    std::string dtype;  // safetensors dtype written
    std::vector<uint64_t> ne;  // GGUF order
    uint64_t bytes = 0;
};

struct HfShard {
    std::string file;  // model-00001-of-00002.safetensors
    std::string header;  // header text, padded
    std::vector<HfTensor> tensors;
    uint64_t bytes() const;  // 8 + header + data
};

struct HfPlan {
    HfDtype dtype = HfDtype::bf16;
    std::string dtype_origin;  // "--dtype", "config.json torch_dtype", "default"
    std::vector<HfShard> shards;
    std::string index_json;  // model.safetensors.index.json
    uint64_t tensor_bytes = 0;
    size_t unpacked_experts = 0;  // tensors made by unpacking stacked experts
    size_t dequantized = 0;  // tensors decoded and rounded to dtype
    size_t kept_float = 0;  // plain floating tensors copied in their own dtype
    std::string config_json;  // config.json as written ("" when the model has none)
};

std::optional<HfDtype> config_dtype(const Model& model);
// A model's config.json for a folder whose tensors are `plan`'s (see above); "" when the model
// has no config.json object.
std::string hf_export_config(const Model& model, const HfPlan& plan);
// config.json text without its "quantization" and "quantization_config" blocks (top level and
// under text_config); nullopt when it is not a JSON object.
std::optional<nlohmann::ordered_json> config_without_quantization(const std::string& text);
Result<HfPlan> plan_hf_export(const Model& model, std::optional<HfDtype> dtype, uint64_t shard_limit = kHfShardBytes);
// Puts `tensors` into plan.shards as above (headers, file names) and writes plan.index_json.
Status shard_tensors(HfPlan& plan, std::vector<HfTensor> tensors, uint64_t shard_limit);

Status write_hf_shard(const Model& model, const HfPlan& plan, size_t shard, SafeFileWriter& out, JobContext* job, uint64_t total_bytes,
                      uint64_t& done_bytes);

struct QuantExactness {
    std::string mode;  // "int4 g64", "nvfp4 g16", "plain F32", ...
    size_t tensors = 0;
    uint64_t values = 0;
    uint64_t rounded = 0;  // values the dtype could not hold exactly
    double worst_error = 0;  // max |rounded - exact|
    bool exact() const { return rounded == 0; }
};

struct HfVerification {
    size_t tensors_checked = 0;
    size_t failures = 0;
    std::vector<std::string> failure_notes;  // the first few, one line each
    std::vector<QuantExactness> modes;  // sorted by mode
};

// For `mlens diff STORE/model OUT_DIR`: maps the per-expert names plan_hf_export gives the
// stacked expert tensors of `stacked` to a slice of the stacked tensor, and the switch_mlp name
// plan_mlx_export gives one to the whole tensor. `stacked` is a store model (its expert groups)
// or an MLX folder (its 3-D "<block>.switch_mlp.<part>" tensors, whose per-expert names a
// per-expert store model has). nullopt when `stacked` has no stacked expert tensor or `other`
// has none of those names.
std::optional<NameMap> unpacked_experts_name_map(const Model& stacked, const Model& other);

Result<HfVerification> verify_hf_export(const Model& model, const HfPlan& plan, const std::string& folder, JobContext* job = nullptr);

}  // namespace mlens
