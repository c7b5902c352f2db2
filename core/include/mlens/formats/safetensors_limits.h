// Limits applied while reading safetensors files and folders (malformed-inputs.md A3). Every cap
// is named; an error caused by a cap names it, e.g. "exceeds limit max_header_bytes=100000000".
#pragma once

#include <cstdint>

namespace mlens {

struct SafetensorsLimits {
    uint64_t max_header_bytes = 100'000'000;  // N, as the reference implementation caps it
    uint32_t max_json_depth = 128;
    uint64_t max_rank = 1024;  // dimensions of one tensor's shape
    uint64_t max_index_bytes = 64ull << 20;  // model.safetensors.index.json
    uint64_t max_shards = 65536;  // distinct shard files named by one index
    uint64_t max_side_file_bytes = 64ull << 20;  // each *.json kept beside the weights
    uint64_t max_side_files = 256;  // *.json files kept from one folder
};

}  // namespace mlens
