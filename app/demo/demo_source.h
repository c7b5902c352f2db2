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

// splitmix64: a tiny portable generator, so every demo weight is the same on every machine.
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : m_state(seed) {}
    // Uniform in [0, 1) from the top 24 bits, exact in float.
    float uniform() {
        m_state += 0x9E3779B97F4A7C15ull;
        uint64_t z = m_state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<float>(z >> 40) / static_cast<float>(1ull << 24);
    }
    // Uniform in [-scale, scale).
    float uniform_pm(float scale) { return scale * (uniform() * 2.0f - 1.0f); }

private:
    uint64_t m_state;
};

std::vector<float> demo_source_values(std::string_view tensor_name, uint64_t count);

}  // namespace mlens::demo
