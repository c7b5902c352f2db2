#include "demo_source.h"

namespace mlens::demo {

namespace {

uint64_t fnv1a(std::string_view text) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (char c : text) {
        h ^= static_cast<uint8_t>(c);
        h *= 0x100000001B3ull;
    }
    return h;
}

class SplitMix {
public:
    explicit SplitMix(uint64_t seed) : m_state(seed) {}
    // Uniform in [0, 1) from the top 24 bits, exact in float.
    float uniform() {
        m_state += 0x9E3779B97F4A7C15ull;
        uint64_t z = m_state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<float>(z >> 40) / static_cast<float>(1ull << 24);
    }

private:
    uint64_t m_state;
};

}  // namespace

std::vector<float> demo_source_values(std::string_view tensor_name, uint64_t count) {
    const bool norm = tensor_name.find("norm") != std::string_view::npos;
    const float spread = norm ? 0.1f : tensor_name.find("embed") != std::string_view::npos ? 0.5f : 0.2f;
    SplitMix rng(fnv1a(tensor_name));
    std::vector<float> values(count);
    for (float& v : values) {
        float bell = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - 2.0f;
        v = (norm ? 1.0f : 0.0f) + spread * bell;
    }
    return values;
}

}  // namespace mlens::demo
