// The one text rendering of a tensor shape, shared by the CLI, the app and the exports, and the
// one decision of the order a format's shapes are read in.
//
// Contract: `ne` is in GGUF order (ne[0] varies fastest), as every TensorInfo holds it.
//  - shape_order(format) is the order a format writes its shapes in, used everywhere that format's
//    tensors are shown: GGUF's `ne`, fastest first; safetensors (and so Hugging Face and Ollama's
//    safetensors-made tensor blobs) slowest first, as PyTorch writes them. Decided: a model of
//    unknown format is shown like GGUF. `--json` gives "shape" in the same order and names it in
//    "shape_order" (shape_order_name: "fastest_first" / "slowest_first").
//  - shape_order_label names the order in a column header or field name: "ne" / "slowest first";
//    shape_header(title, order) is "title (label)", "Shape (ne)".
//  - Each style fixes brackets, separator and the text of a shape without dimensions:
//      bracketed  "[4096, 32000]"   "[]"          (the CLI, the Inspector)
//      times      "4096 × 32000"    "(scalar)"    (the app's tables)
//      plain_x    "4096 x 32000"    "scalar"      (CSV and Markdown exports)
//    the numbers in `order` (the examples are fastest first).
// To leave out outer dimensions (one expert of a stacked tensor), pass a leading subspan.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

enum class ShapeStyle { bracketed, times, plain_x };
enum class ShapeOrder { fastest_first, slowest_first };

ShapeOrder shape_order(Format format);
const char* shape_order_name(ShapeOrder order);
const char* shape_order_label(ShapeOrder order);
std::string shape_header(std::string_view title, ShapeOrder order);
std::vector<uint64_t> shape_in_order(std::span<const uint64_t> ne, ShapeOrder order);

std::string shape_text(std::span<const uint64_t> ne, ShapeStyle style, ShapeOrder order);

}  // namespace mlens
