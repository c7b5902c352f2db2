#include "large_gguf.h"

#include <fstream>

#include "gguf_builder.h"

namespace mlens::test {

namespace {

constexpr uint32_t kTokenNormal = 1, kTokenControl = 3;  // INT32 values, written as their bits

}  // namespace

std::vector<uint8_t> large_gguf_bytes(const LargeGguf& spec) {
    uint64_t n_kv = 2;
    if (spec.tokens) n_kv += spec.token_types ? 3 : 2;
    GgufBuilder b;
    b.header(spec.tensors, n_kv).kv_string("general.architecture", "llama").kv_string("tokenizer.ggml.model", "llama");
    if (spec.tokens) {
        b.kv_array("tokenizer.ggml.tokens", ValueType::string, spec.tokens);
        for (uint64_t i = 0; i < spec.tokens; ++i) b.str("tok_" + std::to_string(i));
        b.kv_array("tokenizer.ggml.scores", ValueType::f32, spec.tokens);
        for (uint64_t i = 0; i < spec.tokens; ++i) b.f32(-static_cast<float>(i));
        if (spec.token_types) {
            b.kv_array("tokenizer.ggml.token_type", ValueType::i32, spec.tokens);
            for (uint64_t i = 0; i < spec.tokens; ++i) b.u32(i < 3 ? kTokenControl : kTokenNormal);
        }
    }
    for (uint64_t i = 0; i < spec.tensors; ++i)
        b.tensor_info("blk." + std::to_string(i / 10) + ".w" + std::to_string(i % 10), {8}, 0, i * 32);
    b.pad_to(32).zeros(spec.tensors * 32);
    return std::move(b.bytes);
}

bool write_large_gguf(const std::string& path, const LargeGguf& spec) {
    std::vector<uint8_t> bytes = large_gguf_bytes(spec);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

}  // namespace mlens::test
