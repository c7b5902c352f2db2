// Tensor listing: which logical tensors a tensor table shows, in which order, with totals — the
// rows of `mlens tensors` and of the app's Tensors panel.
//
// Contract:
//  - Rows are the logical tensors `tensors` (logical_tensors, summary.h; DocumentIndex::tensors):
//    a quantized tensor stored as packed weights, scale and bias is one row, with its logical
//    type, shape, elements and all its bytes; a tensor row's `index` is its position there. Totals over every tensor equal the
//    document summary's tensor count, parameters, bytes and bits/weight.
//  - A tensor is listed when its name contains `text` (case-insensitive), or, with `regex`, when
//    std::regex_search (ECMAScript, case-insensitive) finds the pattern in the first 256 bytes of
//    its name; and, when `layer` is set, when it belongs to that entry of `layers`
//    (summarize_layers over the same tensors; DocumentIndex::layers).
//  - An invalid regex is an E_ARGS error whose message is the regex library's (display-safe);
//    it never throws.
//  - Sorting is stable; ties keep file order. Totals cover the listed tensors (saturating).
//  - With `by_layer`, rows are grouped: one summary row per layer (in the order of
//    `layers`) followed by that layer's listed tensors unless the layer is in `collapsed`.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mlens/analysis/document_index.h"
#include "mlens/model/model.h"
#include "mlens/model/summary.h"
#include "mlens/result.h"

namespace mlens {

enum class TensorColumn { file_order, name, type, shape, elements, size, offset, bits_per_weight };

struct TensorQuery {
    std::string text;
    bool regex = false;
    std::optional<size_t> layer;
    TensorColumn sort = TensorColumn::file_order;
    bool descending = false;
    bool by_layer = false;
    std::set<size_t> collapsed;
    bool operator==(const TensorQuery&) const = default;
};

struct TensorTotals {
    uint64_t count = 0;
    uint64_t elements = 0;
    uint64_t bytes = 0;
    double bits_per_weight() const;
};

struct TensorRow {
    bool layer_row = false;
    size_t index = 0;  // index into `tensors`, or layer index for summary rows
};

struct TensorListing {
    std::vector<TensorRow> rows;
    std::vector<TensorTotals> layer_totals;  // per `layers` entry, listed tensors only
    TensorTotals totals;
};

Result<TensorListing> list_tensors(const Model& model, const std::vector<LogicalTensor>& tensors, const std::vector<LayerSummary>& layers,
                                   const TensorQuery& query);
inline Result<TensorListing> list_tensors(const Model& model, const DocumentIndex& index, const TensorQuery& query) {
    return list_tensors(model, index.tensors, index.layers, query);
}

}  // namespace mlens
