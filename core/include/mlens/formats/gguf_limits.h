// Limits applied while reading GGUF headers (malformed-inputs.md A3). Every cap is named; an
// error caused by a cap names it, e.g. "exceeds limit max_string_bytes=67108864".
#pragma once

#include <cstdint>

namespace mlens {

struct GgufLimits {
    uint64_t max_string_bytes = 64ull << 20;  // longer strings are rejected
    uint64_t max_array_elements = 64ull << 20;  // longer arrays are rejected
    uint64_t max_key_bytes = 65535;
    uint64_t max_tensor_name_bytes = 64;
    uint64_t max_tensor_dims = 4;
    uint64_t max_alignment = 1ull << 20;
    uint64_t max_kv = 16ull << 20;  // E_LIMIT n_kv above this
    // A tensor info takes about a kilobyte once read (its diagnostics included), some 40 times
    // the 25 bytes a file can spend on it: at most about half a gigabyte here. Real files have
    // hundreds of tensors, some thousands at most.
    uint64_t max_tensors = 1ull << 19;  // E_LIMIT n_tensors above this
    uint64_t max_split_count = 1024;  // shards opened for one split model
};

}  // namespace mlens
