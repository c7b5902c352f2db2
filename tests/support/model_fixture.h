// Writes small GGUF models with chosen tensor types through our own writer, for tests of
// decoding, statistics and comparison.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::test {

struct FixtureTensor {
    std::string name;
    uint32_t ggml_type;  // converted from `values` with ggml's quantizer
    std::vector<uint64_t> ne;  // GGUF order
    std::vector<float> values;  // n_elements values
};

// Writes the tensors (general.architecture `architecture`, no tokenizer) to `path`. Returns the
// bytes each tensor was stored as, in order.
std::vector<std::vector<uint8_t>> write_fixture_model(const std::string& path, const std::vector<FixtureTensor>& tensors,
                                                      const std::string& architecture = "llama");

// The same with the metadata given (in that order) instead of general.architecture alone. Types
// that ggml quantizes only with an importance matrix get one of all ones.
std::vector<std::vector<uint8_t>> write_fixture_gguf(const std::string& path, std::vector<MetadataEntry> metadata,
                                                     const std::vector<FixtureTensor>& tensors);

// Deterministic test signal: a mix of sines, scaled to about [-1, 1].
std::vector<float> test_signal(uint64_t n, uint32_t seed = 1);

}  // namespace mlens::test
