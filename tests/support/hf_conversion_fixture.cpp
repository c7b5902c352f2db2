#include "hf_conversion_fixture.h"

#include <ggml.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_writer.h"
#include "model_fixture.h"
#include "safetensors_builder.h"
#include "test_paths.h"

namespace mlens::test {

namespace {

constexpr uint64_t kIn = 8;  // values per row

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// Rows of each 4-row head in HF order. GGUF row 2i + j of a head is HF row j * half + i, so the
// GGUF rows 0 1 2 3 are HF rows 0 2 1 3.
std::vector<float> hf_order(const std::vector<float>& v, uint64_t rows) {
    std::vector<float> hf(v.size());
    const uint64_t order[4] = {0, 2, 1, 3};
    for (uint64_t r = 0; r < rows; ++r)
        std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(r * kIn), kIn,
                    hf.begin() + static_cast<std::ptrdiff_t>(((r / 4) * 4 + order[r % 4]) * kIn));
    return hf;
}

}  // namespace

HfConversionFiles write_hf_conversion(const std::string& dir) {
    const std::vector<float> q = test_signal(8 * kIn, 11), k = test_signal(4 * kIn, 12), norm = test_signal(kIn, 13);
    const std::vector<float> experts = test_signal(2 * 6 * kIn, 14);
    Model g;
    g.format = Format::gguf;
    auto kv = [&](const std::string& key, Value v) {
        MetadataEntry e;
        e.key = key;
        e.value = std::move(v);
        g.metadata.push_back(e);
    };
    kv("general.architecture", Value::of_string("llama"));
    kv("llama.attention.head_count", Value::of_u32(2));
    kv("llama.attention.head_count_kv", Value::of_u32(1));
    const std::vector<const std::vector<float>*> data = {&q, &k, &norm, &experts};
    const std::vector<std::pair<std::string, std::vector<uint64_t>>> infos = {{"blk.0.attn_q.weight", {kIn, 8}},
                                                                              {"blk.0.attn_k.weight", {kIn, 4}},
                                                                              {"blk.0.attn_norm.weight", {kIn}},
                                                                              {"blk.0.ffn_gate_exps.weight", {kIn, 6, 2}}};
    for (size_t i = 0; i < infos.size(); ++i) {
        TensorInfo t;
        t.name = infos[i].first;
        t.type = describe_ggml_type(GGML_TYPE_F32);
        t.ne = infos[i].second;
        t.n_elements = data[i]->size();
        t.n_bytes = data[i]->size() * 4;
        g.tensors.push_back(t);
    }
    HfConversionFiles files{dir + "/conv.gguf", dir + "/hf.safetensors"};
    Status written = write_gguf(g, files.gguf, nullptr, [&](size_t i, uint64_t off, uint64_t len, void* dst) -> Status {
        std::memcpy(dst, reinterpret_cast<const uint8_t*>(data[i]->data()) + off, len);
        return ok_status();
    });
    if (!written) throw std::runtime_error("cannot write " + files.gguf);

    SafetensorsBuilder sb;
    sb.tensor("model.layers.0.self_attn.q_proj.weight", "F32", "[8,8]", f32_bytes(hf_order(q, 8)))
        .tensor("model.layers.0.self_attn.k_proj.weight", "F32", "[4,8]", f32_bytes(hf_order(k, 4)))
        .tensor("model.layers.0.input_layernorm.weight", "F32", "[8]", f32_bytes(norm))
        .tensor("model.layers.0.block_sparse_moe.experts.1.w1.weight", "F32", "[6,8]",
                f32_bytes(std::vector<float>(experts.begin() + 48, experts.end())))
        .tensor("model.layers.0.block_sparse_moe.experts.0.w1.weight", "F32", "[6,8]",
                f32_bytes(std::vector<float>(experts.begin(), experts.begin() + 48)))
        .tensor("model.layers.0.mlp.extra.weight", "F32", "[2]", f32_bytes({1, 2}));
    write_whole_file(files.safetensors, sb.bytes());
    return files;
}

}  // namespace mlens::test
