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

}  // namespace

std::vector<float> demo_source_values(std::string_view tensor_name, uint64_t count) {
    const bool norm = tensor_name.find("norm") != std::string_view::npos;
    const float spread = norm ? 0.1f : tensor_name.find("embed") != std::string_view::npos ? 0.5f : 0.2f;
    SplitMix64 rng(fnv1a(tensor_name));
    std::vector<float> values(count);
    for (float& v : values) {
        float bell = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - 2.0f;
        v = (norm ? 1.0f : 0.0f) + spread * bell;
    }
    return values;
}

}  // namespace mlens::demo
