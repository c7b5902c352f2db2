// The one text rendering of a tensor shape, shared by the CLI, the app and the exports.
//
// Contract: `ne` is in GGUF order (ne[0] varies fastest), as every TensorInfo holds it. Each style
// fixes the order, brackets, separator and the text of a shape without dimensions:
//   bracketed  "[4096, 32000]"   GGUF order; "[]"          (the CLI, the Inspector)
//   row_major  "[32000, 4096]"   slowest first, as safetensors and PyTorch write it; "[]"
//   times      "4096 × 32000"    GGUF order; "(scalar)"    (the app's tables)
//   plain_x    "4096 x 32000"    GGUF order, ASCII; "scalar" (CSV and Markdown exports)
// To leave out outer dimensions (one expert of a stacked tensor), pass a leading subspan.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mlens {

enum class ShapeStyle { bracketed, row_major, times, plain_x };

std::string shape_text(std::span<const uint64_t> ne, ShapeStyle style);

}  // namespace mlens
