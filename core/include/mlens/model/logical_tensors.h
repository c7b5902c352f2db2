// Logical tensors: the tensors a Model means, whatever entries store them. Every listing (the
// CLI's `tensors` and `info`, the app's Tensors panel, Inspector, Navigator and status bar) reads
// this one list, so they all count the same tensors, parameters and bytes.
//
// Contract:
//  - One LogicalTensor per entry of Model::tensors that is not a companion (part_of unset), in
//    file order. `index` is that entry's index in Model::tensors: selections, TensorView::open
//    and byte ranges keep using it.
//  - A packed quantized entry (TensorInfo::quant, Ollama/MLX tensor blobs) folds in its scale,
//    bias and global-scale companions: type "<quant type> g<group size>" ("int4 g64"), the
//    logical (unpacked) shape, the logical values as elements, and as bytes the sum of every
//    entry it is stored in. `parts` lists those entries: the packed one first, then scale, bias
//    and global scale as present. A quantized tensor whose logical shape is unknown (an
//    undecidable type) keeps the packed entry's shape and elements.
//  - Any other entry is itself: storage type name, ne, n_elements, n_bytes, one part.
//  - `bytes` is nullopt when the size of any part is unknown (a type the pinned ggml does not
//    know); sums saturate at UINT64_MAX.
//  - `group` is the index in Model::groups of the expert group the tensor belongs to; `expert`
//    is its expert number when the group stores experts one tensor each ("<group>.<e>.<part>").
//  - data_presence: the worst DataPresence (truncation.h) of the entries a tensor is stored in.
//  - bits_per_weight(): bytes × 8 / elements, 0 when either is unknown or zero.
//  - stored_as_text: the entries behind a tensor, "U32 [8, 64] + scale BF16 [1, 64] + bias BF16
//    [1, 64]" (ne in GGUF order); expert_text: "expert 2 of 4" for a per-expert member, "4
//    experts stacked" for a member whose slowest dimension holds the experts, "1 expert" for a
//    single unstacked one, "" outside any group. Both escape nothing: types and counts only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

struct StoredPart {
    size_t entry = 0;  // index into Model::tensors
    const char* role = "";  // "data", "packed", "scale", "bias", "global_scale"
};

struct LogicalTensor {
    size_t index = 0;
    std::string type;  // "Q4_K", "BF16", "int4 g64"
    std::vector<uint64_t> ne;  // GGUF order: ne[0] is the fastest-varying dimension
    uint64_t elements = 0;
    std::optional<uint64_t> bytes;
    std::vector<StoredPart> parts;
    std::optional<size_t> group;
    std::optional<uint64_t> expert;

    double bits_per_weight() const;
    // Stored as several entries (a packed tensor with its scale and bias).
    bool folded() const { return parts.size() > 1; }
};

std::vector<LogicalTensor> logical_tensors(const Model& model);

// The logical tensor whose main entry is Model::tensors[entry] (`tensors` as logical_tensors
// returns it, sorted by index), or nullptr for a companion or an index out of range.
const LogicalTensor* find_logical_tensor(const std::vector<LogicalTensor>& tensors, size_t entry);

DataPresence data_presence(const Model& model, const LogicalTensor& t);
std::string stored_as_text(const Model& model, const LogicalTensor& t);
std::string expert_text(const Model& model, const LogicalTensor& t);

}  // namespace mlens
