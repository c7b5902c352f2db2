// The seeded source weights of the demo store's safetensors models: the float values every
// tensor held before it was quantized or rounded to BF16 / F16, so the store's blobs can be
// written from them and a test can measure how closely the blobs decode back.
//
// Contract:
//  - demo_source_values(name, count) is a pure function of the tensor name and the count: the
//    same on every machine and run. Value i is element i in row-major order (safetensors shape,
//    slowest dimension first); for a stacked expert tensor the experts follow one another.
//  - The generator is splitmix64 seeded with the FNV-1a 64-bit hash of the name; each value is
//    bell-shaped (the sum of four uniforms in [0, 1), minus 2) times a spread chosen by the name:
//    names containing "norm" give 1 + 0.1 x that, names containing "embed" 0.5 x, every other
//    name 0.2 x. So |value - 1| <= 0.2 for norms and |value| <= 1 or 0.4 otherwise.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace mlens::demo {

std::vector<float> demo_source_values(std::string_view tensor_name, uint64_t count);

}  // namespace mlens::demo
