// Facts about a Model that the CLI's `info`, the app's header view and the status bar show.
//
// Contract: pure functions of the Model; sums use saturating arithmetic and report overflow
// instead of wrapping (malformed-inputs.md A3 "totals"). Layer numbers come from the tensor name
// only: "blk.N." (GGUF) or "model.layers.N." / "layers.N." (Hugging Face).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

struct ModelSummary {
    Format format = Format::unknown;
    uint32_t version = 0;
    std::string architecture;              // general.architecture, or empty
    std::string name;                      // general.name, or empty
    std::optional<uint64_t> file_type;     // general.file_type
    std::string file_type_name;            // "Q4_K_M", "F16", ... or "unknown(N)"
    uint64_t parameters = 0;               // weights: tensor elements, a packed quantized tensor's
                                           // logical values (its companions add bytes, not weights)
    uint64_t tensor_count = 0;
    uint64_t tensor_bytes = 0;             // sum of known tensor sizes
    uint64_t file_bytes = 0;
    double bits_per_weight = 0.0;          // tensor_bytes * 8 / parameters
    bool totals_overflow = false;
    size_t errors = 0;
    size_t warnings = 0;
};

ModelSummary summarize(const Model& model);

// Bits per logical weight of the packed entry `index` of a multi-entry quantized tensor: the bytes
// of the entry, its scale, bias and global scale, over its logical values; 0 for any other entry.
double quantized_bits_per_weight(const Model& model, size_t index);

// Name of a llama_ftype value as llama.cpp's quantize tool spells it ("Q4_K_M", "BF16", ...).
std::string file_type_name(uint64_t ftype);

// Block number of a tensor name, if it has one.
std::optional<uint32_t> layer_of(std::string_view tensor_name);

struct LayerSummary {
    std::optional<uint32_t> layer;          // nullopt: tensors outside any block
    std::vector<size_t> tensors;            // indices into Model::tensors
    uint64_t parameters = 0;
    uint64_t bytes = 0;
    std::vector<std::string> types;         // storage types used, in first-seen order
};

// Groups tensors by layer, layers in ascending order, non-block tensors last.
std::vector<LayerSummary> summarize_layers(const Model& model);

// "1.2 GB", "512 B" (decimal units, like the sizes in ux.md).
std::string human_bytes(uint64_t bytes);
// "7.24 B", "125 M", "3.1 K".
std::string human_count(uint64_t count);

}  // namespace mlens
