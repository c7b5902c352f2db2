// GGUF fixtures from stored bytes: tensors given exactly as a file holds them (any ggml type, any
// block contents), written through our own writer with general.architecture = "llama".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/result.h"

namespace mlens::test {

struct RawTensor {
    std::string name;
    uint32_t type;  // ggml type id
    std::vector<uint64_t> ne;  // GGUF order
    std::vector<uint8_t> bytes;  // the stored bytes, little-endian
};

Status write_raw_gguf(const std::string& path, const std::vector<RawTensor>& tensors);

}  // namespace mlens::test
