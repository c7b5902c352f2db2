// Facts about a Model that the CLI's `info`, the app's header view and the status bar show.
//
// Contract: pure functions of the Model; sums use saturating arithmetic and report overflow
// instead of wrapping (malformed-inputs.md A3 "totals"). Tensors, parameters, bytes and layers
// are those of the logical tensors (logical_tensors.h): a quantized tensor stored as packed
// weights, scale and bias is one tensor whose parameters are its logical values and whose bytes
// include every entry. Layer numbers come from the tensor name only: "blk.N." (GGUF) or
// "model.layers.N." / "layers.N." (Hugging Face).
// The architecture is general.architecture (GGUF); without it, the model_type of the
// config.json a safetensors folder or Ollama tensor-blob model carries ("file:config.json";
// top level, else under text_config), else that file's first "architectures" entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/logical_tensors.h"
#include "mlens/model/model.h"
#include "mlens/text/number_format.h"  // human_bytes, human_count, mib_text: the sizes and counts summaries show

namespace mlens {

struct ModelSummary {
    Format format = Format::unknown;
    uint32_t version = 0;
    std::string architecture;  // see the contract; empty when nothing names it
    std::string architecture_source;  // "general.architecture", "config.json model_type", ...
    std::string name;  // general.name, or empty
    std::optional<uint64_t> file_type;  // general.file_type
    std::string file_type_name;  // "Q4_K_M", "F16", ... or "unknown(N)"
    uint64_t parameters = 0;  // elements of the logical tensors
    uint64_t tensor_count = 0;  // logical tensors
    uint64_t stored_tensor_count = 0;  // entries as stored (Model::tensors), companions included
    uint64_t tensor_bytes = 0;  // sum of known tensor sizes
    uint64_t file_bytes = 0;
    double bits_per_weight = 0.0;  // tensor_bytes * 8 / parameters
    bool totals_overflow = false;
    uint32_t files = 0;  // the files of the model, a split model's parts all counted
    // Files of a split model that could not be read: their tensors are in none of the figures.
    uint32_t missing_files = 0;
    std::optional<uint64_t> declared_tensor_count;  // split.tensors.count, while files are missing
    size_t errors = 0;  // as listed (truncation.h: listed_error_count)
    size_t warnings = 0;

    // " in the 2 of 3 files present" while files are missing, else empty: what every figure of a
    // partly read split model says after it.
    std::string present_files_text() const;
    // The parameter count a model list shows: nullopt when no tensor was read (a model whose
    // weights are not tensors of its own) or the totals overflowed.
    std::optional<uint64_t> parameter_count() const {
        if (tensor_count == 0 || totals_overflow) return std::nullopt;
        return parameters;
    }
    // The tensor count as every view shows it: "21", "16 of 21 in the 2 of 3 files present", with
    // " (stored as N entries with their scales and biases)" when entries hold companions.
    std::string tensors_text() const;
};

// `tensors` is logical_tensors(model); the overloads without it compute it.
ModelSummary summarize(const Model& model, const std::vector<LogicalTensor>& tensors);
ModelSummary summarize(const Model& model);

// The first "architectures" entry of the config.json a safetensors folder or Ollama tensor-blob
// model carries (the Hugging Face class, "Qwen3MoeForCausalLM"); empty when there is none.
std::string hf_architecture_class(const Model& model);
// Name of a llama_ftype value as llama.cpp's quantize tool spells it ("Q4_K_M", "BF16", ...).
std::string file_type_name(uint64_t ftype);

// Block number of a tensor name, if it has one.
std::optional<uint32_t> layer_of(std::string_view tensor_name);

struct LayerSummary {
    std::optional<uint32_t> layer;  // nullopt: tensors outside any block
    std::vector<size_t> tensors;  // logical tensors, as indices into Model::tensors
    uint64_t parameters = 0;
    uint64_t bytes = 0;
    std::vector<std::string> types;  // logical types used, in first-seen order
};

// Groups the logical tensors by layer, layers in ascending order, non-block tensors last.
std::vector<LayerSummary> summarize_layers(const Model& model, const std::vector<LogicalTensor>& tensors);
std::vector<LayerSummary> summarize_layers(const Model& model);

// One line naming a model for the inference views: "llama · 4.19 M parameters · F32", i.e. the
// architecture ("unknown architecture" without one), the parameter count of the logical tensors
// ("no weights" for a vocabulary-only file) and general.file_type's name when the file has one.
std::string model_line(const ModelSummary& summary);

}  // namespace mlens
