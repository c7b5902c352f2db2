// Pieces of an in-memory Model for fixtures that build one key and one tensor at a time: a
// metadata entry appended, and a tensor's info (type, shape, element count, byte size) derived
// from its ggml type id and shape. Header-only and needing mlens_core alone, so the fuzz seed
// writer, which does not link the test support library, shares it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlens/formats/ggml_types.h"
#include "mlens/model/model.h"

namespace mlens::test {

inline void add_metadata(Model& model, std::string key, Value value) {
    MetadataEntry e;
    e.key = std::move(key);
    e.value = std::move(value);
    model.metadata.push_back(std::move(e));
}

// `ne` in GGUF order. n_bytes is nullopt when ne[0] is not a whole number of the type's blocks.
inline TensorInfo tensor_info(std::string name, uint32_t ggml_type, std::vector<uint64_t> ne) {
    TensorInfo t;
    t.name = std::move(name);
    t.type = describe_ggml_type(ggml_type);
    t.ne = std::move(ne);
    t.n_elements = 1;
    for (uint64_t n : t.ne) t.n_elements *= n;
    t.n_bytes = ggml_tensor_bytes(t.type, t.ne.empty() ? 1 : t.ne[0], t.n_elements);
    return t;
}

}  // namespace mlens::test
