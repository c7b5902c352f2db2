// The per-layer plot of a whole-model error: one bar per layer (pooled RMSE or the worst tensor's
// NMSE), drawn on a PlotFrame. Hovering a bar shows the layer's numbers and its worst tensor.
//
// Contract: returns the layer (index into `layers`) whose bar was clicked this frame. Layer -1
// (tensors outside the blocks: embeddings, output, final norm) is a group of its own: its bar
// stands apart right of the last block behind a rule, in its own colour, labelled "other" on the
// axis, whose title names what it holds (never as layer -1). Non-finite values are drawn as full-height bars.
// layer_plot_position is where a layer's bar stands: the block index, or for layer -1 two past
// the last block (one empty slot between).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include <imgui.h>

#include "mlens/analysis/model_error.h"

namespace mlens {

enum class LayerMetric { rmse, worst_nmse };

double layer_plot_position(const std::vector<LayerError>& layers, int64_t layer);

std::optional<size_t> layer_error_plot(const std::vector<LayerError>& layers, LayerMetric metric, ImVec2 size);

}  // namespace mlens
