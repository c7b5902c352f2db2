// The tensor part of the store panel: a store model's tensor entries with their quantization
// (type, mode, bits, group size, where that came from), stored vs logical shapes and companion
// entries, and its expert groups as group → expert → projection.
#pragma once

#include "fonts.h"
#include "mlens/model/model.h"

namespace mlens {

void store_tensors_view(const Model& model, const FontSet& fonts);
void store_groups_view(const Model& model);

}  // namespace mlens
