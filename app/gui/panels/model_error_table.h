// ModelErrorTable: the per-tensor rows of a whole-model error, one ImGui table sortable by every
// column (tensor, layer, types, RMSE, NMSE, max |a-b|, cosine, SNR dB). A tensor that could not be
// compared shows its reason in place of the metrics.
//
// Contract: draw() returns the row (index into ModelError::tensors) the user clicked this frame.
// `selected_tensor` is the tensor index of this document (TensorPair::b) to highlight. The order
// is computed again when the sort changes or after reset() (a new result).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "fonts.h"
#include "state/model_error_run.h"

namespace mlens {

class ModelErrorTable {
public:
    std::optional<size_t> draw(const ModelError& error, const FontSet& fonts, std::optional<size_t> selected_tensor);
    void reset() { m_sorted = false; }
    // The rows in the order shown.
    const std::vector<size_t>& order() const { return m_order; }

private:
    ErrorColumn m_column = ErrorColumn::name;
    bool m_descending = false;
    bool m_sorted = false;
    std::vector<size_t> m_order;
};

}  // namespace mlens
