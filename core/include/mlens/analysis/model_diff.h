// Model diff: what differs between two models (GGUF, safetensors, Ollama blobs) in metadata and
// tensors, with tensors aligned by name through an optional name map, and optionally the
// numeric error of every paired tensor (model_error.h).
//
// Contract:
//  - Metadata is compared by key: added (only in B), removed (only in A), changed (type or value
//    differs). Values compare exactly: scalars by type and bits, strings by bytes, arrays by
//    element type, count and every element. Shown values are format_value texts.
//  - Tensors are paired by pair_tensors with the given map and side. A pair is listed when it is
//    renamed (paired through the map), retyped (storage type names differ, or the decoded type
//    for MLX tensors), reshaped (logical shapes differ; a slice's shape is the slice's), or,
//    with numeric comparison, its values differ (any error, or a tensor that could not be
//    compared). Unpaired tensors are added / removed. Identical models give an empty diff.
//  - options.name_map empty and options.auto_hf_map set: when exactly one model has Hugging
//    Face tensor names (has_hf_names) and the other is GGUF, the HF→GGUF map for the
//    architecture found by detect_hf_architecture (GGUF side first) is used on the HF side.
//    Callers with another map (e.g. Ollama→upstream through a compat plan) pass it with its side.
//  - Numeric comparison runs as one job (progress, cancel → E_CANCELLED); without it the call is
//    fast and reads no tensor data.
//  - Names for display and JSON, shared by `mlens diff` and the app's Diff view:
//    metadata_change_name ("added", "removed", "changed"), metadata_change_mark ("+", "-", "~"),
//    tensor_change_names (the flags that hold, in the order added, removed, renamed, retyped,
//    reshaped, values); metadata_side_text, one side of a metadata change as it reads: its type, a
//    space and its value, with the enum name in parentheses when there is one ("u32 7 (Q8_0)");
//    "" on the side the key is missing from; tensor_type_text and tensor_shape_text, a tensor
//    change's type and shape as one text: the one value when both sides agree or one is missing,
//    else "A→B" (shapes bracketed, GGUF order ne as ModelDiff holds them: "[64, 64]→[64, 128]").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/model_error.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

enum class MetadataChangeKind { added, removed, changed };

struct MetadataChange {
    MetadataChangeKind kind = MetadataChangeKind::changed;
    std::string key;
    std::string type_a, type_b;  // empty on the missing side
    std::string value_a, value_b;
    // The same types as data (type_a is their text): the value type, and an array's element type.
    std::optional<ValueType> value_type_a, value_type_b, element_type_a, element_type_b;
    // The enum name of a number llama.cpp means as an enum (model/enum_names.h), empty otherwise.
    std::string name_a, name_b;
};

struct TensorChange {
    std::string name_a, name_b;  // empty on the missing side
    std::string type_a, type_b;
    std::vector<uint64_t> shape_a, shape_b;
    bool added = false, removed = false, renamed = false, retyped = false, reshaped = false, values_differ = false;
    std::optional<TensorComparison> error;
    std::string failed;  // why numeric comparison did not run
    std::optional<Error> read_error;  // when that is the data failing to read (TensorError::read_error)
    std::string read_error_path;  // TensorError::read_error_path
};

struct DiffOptions {
    bool numeric = false;
    NameMap name_map;  // applies to the model on `map_side`
    MapSide map_side = MapSide::a;
    bool auto_hf_map = true;
    unsigned threads = 0;
};

struct ModelDiff {
    std::vector<MetadataChange> metadata;
    std::vector<TensorChange> tensors;
    std::vector<LayerError> layers;  // numeric only
    std::string name_map;  // which map aligned the tensors, for display ("", "hf→gguf llama")
    bool empty() const { return metadata.empty() && tensors.empty(); }
};

const char* metadata_change_name(MetadataChangeKind kind);
const char* metadata_change_mark(MetadataChangeKind kind);
std::vector<std::string> tensor_change_names(const TensorChange& change);
enum class DiffSide { a, b };
std::string metadata_side_text(const MetadataChange& change, DiffSide side);
std::string tensor_type_text(const TensorChange& change);
std::string tensor_shape_text(const TensorChange& change);

// The tensors the diff paired under different names, B's name to A's (for recipe_difference).
std::map<std::string, std::string> renamed_pairs(const ModelDiff& diff);

Result<ModelDiff> diff_models(const Model& a, const Model& b, const DiffOptions& options = {}, JobContext* job = nullptr);

}  // namespace mlens
