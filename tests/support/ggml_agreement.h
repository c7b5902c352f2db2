// Compares a Model our reader produced with ggml's parse of the same bytes.
#pragma once

#include <string>

#include "mlens/model/model.h"

struct gguf_context;

namespace mlens::test {

// Empty when keys, types, values, tensor names, types, shapes, offsets and sizes all agree;
// otherwise a description of the first difference.
std::string ggml_disagreement(const Model& ours, const gguf_context* theirs);

}  // namespace mlens::test
