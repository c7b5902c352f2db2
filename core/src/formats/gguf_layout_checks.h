// Checks of one GGUF file's tensor data layout, run once all its tensor infos parsed: offsets
// resolved to absolute positions, alignment, bounds against the file size, overlaps, canonical
// order, padding contents and trailing bytes (malformed-inputs.md A3, "tensor offsets").
#pragma once

#include <cstddef>
#include <cstdint>

#include "mlens/model/model.h"

namespace mlens {

struct GgufLayoutContext {
    Model& model;
    uint32_t file;
    size_t first_tensor;  // index in model.tensors of this file's first tensor
    uint64_t alignment;
    uint64_t header_end;  // end of the tensor infos
};

// Sets every tensor's data_offset; adds diagnostics. Returns true (the header itself parsed).
bool check_gguf_layout(const GgufLayoutContext& ctx);

}  // namespace mlens
