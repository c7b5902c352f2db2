// Importance-matrix files laid out byte by byte as llama.cpp's llama-imatrix writes them
// (tools/imatrix/imatrix.cpp: save_imatrix and save_imatrix_legacy), for reader and requant tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlens::test {

struct ImatrixFixtureEntry {
    std::string name;  // the weight's name
    uint64_t columns = 0;
    std::vector<float> counts;  // per expert (legacy: counts[0] is ncall)
    std::vector<float> sums;  // experts × columns, expert-major
};

// GGUF: general.type "imatrix", imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size, then per
// entry in the order given "<name>.in_sum2" F32 [columns, experts] and "<name>.counts" F32
// [1, experts], data aligned to 32 bytes.
std::vector<uint8_t> gguf_imatrix_bytes(const std::vector<ImatrixFixtureEntry>& entries, const std::vector<std::string>& datasets,
                                        uint32_t chunk_count, uint32_t chunk_size);

// Legacy .dat: int32 entry count; per entry int32 name length, name, int32 ncall (counts[0]),
// int32 value count, the sums; then int32 chunk count, int32 dataset length and the dataset.
std::vector<uint8_t> legacy_imatrix_bytes(const std::vector<ImatrixFixtureEntry>& entries, int32_t chunk_count, const std::string& dataset);

}  // namespace mlens::test
