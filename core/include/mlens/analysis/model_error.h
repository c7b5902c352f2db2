// Whole-model error: the tensors of two models paired by name (optionally through a name map),
// every pair compared numerically as one job, and the error aggregated per layer.
//
// Contract:
//  - pair_tensors: companions (TensorInfo::part_of) are skipped; they belong to their packed
//    tensor. Each tensor of the mapped side (MapSide) is looked up through the map, falling back
//    to its own name; the counterpart may be a slice of a stacked tensor. A tensor of the other
//    side is paired at most once per slice; the rest of both sides are unpaired. Pairs keep the
//    order of model A.
//  - open_pair_side: the side's TensorView (sliced if asked), with the HF→GGUF value transform
//    (row permutation, added constant) applied when the side is the mapped one.
//  - compare_models: every pair whose element counts agree and that both decode is compared with
//    compare_sources (A is the reference); others carry a reason in `failed`. Progress is shared
//    out by element count; cancel gives E_CANCELLED. Pairs are compared one after another, each
//    in compare_sources' bounded chunks (analysis_memory.h), so memory does not grow with the
//    tensors' sizes; the transformed side reads any range, a row of it in pieces.
//  - Layers: the number after "blk." or "layers." in A's name (-1 when none). Per layer: the
//    pooled RMSE sqrt(sum(rmse^2 * count) / sum(count)), the largest max_abs, and the tensor
//    with the largest NMSE.
//  - overall: RMSE, NMSE, cosine and SNR over all paired values of every compared tensor, from
//    the tensors' sums (error_figures), as if they were one tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/name_map.h"
#include "mlens/analysis/tensor_compare.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

enum class MapSide { a, b };

struct PairSide {
    size_t tensor = 0;  // index in Model::tensors
    std::optional<uint64_t> slice;
    uint32_t rope_heads = 0;
    float add = 0.0f;
};

struct TensorPair {
    PairSide a, b;
    bool renamed = false;  // paired through the map under another name
};

struct Pairing {
    std::vector<TensorPair> pairs;
    std::vector<size_t> only_a, only_b;  // unpaired tensor indices
};

Pairing pair_tensors(const Model& a, const Model& b, const NameMap& map = {}, MapSide side = MapSide::a);

// How two models' tensor names align without being told: when exactly one of them has Hugging
// Face tensor names (has_hf_names, and is not GGUF) and the other is GGUF, the HF→GGUF map for the
// architecture detect_hf_architecture finds (GGUF side first), applied on the HF side; nullopt
// otherwise: when one model has stacked expert tensors and the other the per-expert names a
// Hugging Face export gives them (hf_export.h unpacked_experts_name_map), those names map to
// slices of the stacked tensors; else names pair as they are.
struct NameAlignment {
    NameMap map;
    MapSide side = MapSide::a;
    std::string label;  // "hf→gguf llama"
};
std::optional<NameAlignment> automatic_name_alignment(const Model& a, const Model& b);

// A decoded side of a pair, owning its view.
class PairSource {
public:
    static Result<std::unique_ptr<PairSource>> open(const Model& model, const PairSide& side);
    virtual ~PairSource() = default;
    virtual const FloatSource& source() const = 0;
    virtual const TensorView& view() const = 0;
};

struct TensorError {
    TensorPair pair;
    std::string name_a, name_b;  // name_b carries "[slice]" for a slice
    std::string type_a, type_b;
    int layer = -1;
    std::optional<TensorComparison> error;
    std::string failed;  // why no error was computed
    std::optional<Error> read_error;  // set when that is the tensors' data failing to read or decode
    std::string read_error_path;  // with read_error: the file (SourceFile::path) whose read failed
};

struct LayerError {
    int layer = -1;
    uint32_t tensors = 0;
    uint64_t count = 0;
    double rmse = 0, max_abs = 0, worst_nmse = 0;
    std::string worst_tensor;
};

// Every compared tensor's values pooled as one: the figures over all their finite pairs.
struct OverallError {
    uint32_t tensors = 0;
    ErrorSums sums;
    ErrorFigures figures;
};

struct ModelError {
    std::vector<TensorError> tensors;
    std::vector<LayerError> layers;  // ascending layer number, -1 (no layer) first
    OverallError overall;
};

int layer_of(const std::string& name);
// "name" or "name[slice]".
std::string slice_label(const std::string& name, std::optional<uint64_t> slice);

Result<ModelError> compare_models(const Model& a, const Model& b, const Pairing& pairing, JobContext* job = nullptr, unsigned threads = 0);

}  // namespace mlens
