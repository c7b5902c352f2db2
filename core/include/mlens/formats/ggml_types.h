// ggml tensor types as the pinned ggml defines them (ids, names, block size, bytes per block).
// Names are ggml's, upper-cased as llama.cpp's tools print them: "F32", "Q4_K", "IQ2_XXS".
//
// Contract: describe_ggml_type reads the type's row of ggml_type_table.h (which agrees with the
// linked ggml); ids the pinned ggml does not know (>= GGML_TYPE_COUNT) or that it removed
// (4, 5, 31-33, 36-38) have no row and come back with known == false and name "unknown(<id>)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlens/model/model.h"

namespace mlens {

StorageType describe_ggml_type(uint32_t id);
// The id of a ggml type name, if the pinned ggml knows it; any case ("Q4_K", "q4_k"), as
// llama-quantize reads type names.
std::optional<uint32_t> ggml_type_from_name(const std::string& name);
uint32_t ggml_type_count();

// Bytes of a tensor of `n_elements` elements of a known type: divides first, checks ne0 is a
// whole number of blocks, never wraps. nullopt on overflow or misalignment.
std::optional<uint64_t> ggml_tensor_bytes(const StorageType& type, uint64_t ne0, uint64_t n_elements);

}  // namespace mlens
