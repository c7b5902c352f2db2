// The tensor part of the store panel: a store model's tensor entries with their quantization
// (type, mode, bits, group size, where that came from), stored vs logical shapes and companion
// entries, and its expert groups as group → expert → projection.
// Every tensor is listed: those read from a blob the store check failed are marked with the
// reason, and each tensor layer whose blob could not be read at all gets a row of its own.
#pragma once

#include <vector>

#include "fonts.h"
#include "mlens/model/model.h"
#include "mlens/ollama/store_check.h"

namespace mlens {

void store_tensors_view(const Model& model, const std::vector<FailedTensorLayer>& failed, const FontSet& fonts);
void store_groups_view(const Model& model);

}  // namespace mlens
