// make_demo_models VOCAB_GGUF OUT_DIR
//
// Writes the demo models the app opens on first launch and the tests run: a tiny llama
// (2 blocks, n_embd 64, 4 heads / 2 KV heads, n_ff 192) whose tokenizer keys are copied from a
// real upstream vocab GGUF (llama.cpp's models/ggml-vocab-llama-spm.gguf) and whose weights are
// seeded pseudo-random, in three files: tiny-llama-f32.gguf, tiny-llama-q8_0.gguf and
// tiny-llama-q4_0.gguf (the same weights, quantized with ggml; norms stay F32), and the demo
// Ollama store ollama-store/ (demo_store.h), and the Ollama-format files of ollama_demo_models.h.
// Deterministic: the same inputs give the same bytes.
#include <ggml.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "demo_source.h"
#include "demo_store.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "ollama_demo_models.h"

namespace {

using namespace mlens;

constexpr uint32_t kEmbd = 64, kHeads = 4, kKvHeads = 2, kFf = 192, kBlocks = 2, kContext = 256;

struct DemoTensor {
    std::string name;
    std::vector<uint64_t> ne;
    std::vector<float> values;
};

std::vector<DemoTensor> make_weights(uint64_t n_vocab) {
    demo::SplitMix64 rng(20261122);
    std::vector<DemoTensor> out;
    auto add = [&](std::string name, std::vector<uint64_t> ne, float scale, bool is_norm) {
        uint64_t n = 1;
        for (uint64_t d : ne) n *= d;
        DemoTensor t{std::move(name), std::move(ne), std::vector<float>(n)};
        for (float& v : t.values) v = is_norm ? 1.0f + rng.uniform_pm(0.1f) : rng.uniform_pm(scale);
        out.push_back(std::move(t));
    };
    const uint64_t kv = kEmbd / kHeads * kKvHeads;
    add("token_embd.weight", {kEmbd, n_vocab}, 0.5f, false);
    for (uint32_t b = 0; b < kBlocks; ++b) {
        std::string p = "blk." + std::to_string(b) + ".";
        add(p + "attn_norm.weight", {kEmbd}, 0, true);
        add(p + "attn_q.weight", {kEmbd, kEmbd}, 0.2f, false);
        add(p + "attn_k.weight", {kEmbd, kv}, 0.2f, false);
        add(p + "attn_v.weight", {kEmbd, kv}, 0.2f, false);
        add(p + "attn_output.weight", {kEmbd, kEmbd}, 0.2f, false);
        add(p + "ffn_norm.weight", {kEmbd}, 0, true);
        add(p + "ffn_gate.weight", {kEmbd, kFf}, 0.2f, false);
        add(p + "ffn_up.weight", {kEmbd, kFf}, 0.2f, false);
        add(p + "ffn_down.weight", {kFf, kEmbd}, 0.2f, false);
    }
    add("output_norm.weight", {kEmbd}, 0, true);
    add("output.weight", {kEmbd, n_vocab}, 0.2f, false);
    return out;
}

MetadataEntry entry(std::string key, Value value) {
    MetadataEntry e;
    e.key = std::move(key);
    e.value = std::move(value);
    return e;
}

Value f32_value(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return Value::of_scalar(Scalar{ValueType::f32, bits});
}

int write_variant(const Model& vocab, const std::vector<DemoTensor>& weights, ggml_type type, uint32_t ftype, const std::string& path,
                  const std::string& label) {
    Model m;
    m.format = Format::gguf;
    m.metadata.push_back(entry("general.architecture", Value::of_string("llama")));
    m.metadata.push_back(entry("general.name", Value::of_string("ModelLens tiny llama demo (" + label + ")")));
    m.metadata.push_back(entry("general.file_type", Value::of_u32(ftype)));
    m.metadata.push_back(entry("llama.context_length", Value::of_u32(kContext)));
    m.metadata.push_back(entry("llama.embedding_length", Value::of_u32(kEmbd)));
    m.metadata.push_back(entry("llama.block_count", Value::of_u32(kBlocks)));
    m.metadata.push_back(entry("llama.feed_forward_length", Value::of_u32(kFf)));
    m.metadata.push_back(entry("llama.attention.head_count", Value::of_u32(kHeads)));
    m.metadata.push_back(entry("llama.attention.head_count_kv", Value::of_u32(kKvHeads)));
    m.metadata.push_back(entry("llama.rope.dimension_count", Value::of_u32(kEmbd / kHeads)));
    m.metadata.push_back(entry("llama.rope.freq_base", f32_value(10000.0f)));
    m.metadata.push_back(entry("llama.attention.layer_norm_rms_epsilon", f32_value(1e-5f)));
    for (const MetadataEntry& e : vocab.metadata)
        if (e.key.starts_with("tokenizer.")) m.metadata.push_back(e);

    std::vector<std::vector<uint8_t>> data;
    for (const DemoTensor& w : weights) {
        bool is_norm = w.ne.size() == 1;
        ggml_type t = is_norm ? GGML_TYPE_F32 : type;
        TensorInfo info;
        info.name = w.name;
        info.type = describe_ggml_type(t);
        info.ne = w.ne;
        info.n_elements = w.values.size();
        info.n_bytes = ggml_row_size(t, static_cast<int64_t>(w.ne[0])) * (w.values.size() / w.ne[0]);
        std::vector<uint8_t> bytes(*info.n_bytes);
        if (t == GGML_TYPE_F32)
            std::memcpy(bytes.data(), w.values.data(), bytes.size());
        else
            ggml_quantize_chunk(t, w.values.data(), bytes.data(), 0, static_cast<int64_t>(w.values.size() / w.ne[0]),
                                static_cast<int64_t>(w.ne[0]), nullptr);
        m.tensors.push_back(std::move(info));
        data.push_back(std::move(bytes));
    }
    auto provider = [&](size_t i, uint64_t offset, uint64_t length, void* dst) -> Status {
        std::memcpy(dst, data[i].data() + offset, length);
        return ok_status();
    };
    Status s = write_gguf(m, path, nullptr, provider);
    if (!s) {
        std::fprintf(stderr, "make_demo_models: %s: %s\n", path.c_str(), s.error().to_string().c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: make_demo_models VOCAB_GGUF OUT_DIR\n");
        return 2;
    }
    auto vocab = open_gguf(argv[1]);
    if (!vocab || vocab->error_count() > 0 || !vocab->find("tokenizer.ggml.tokens")) {
        std::fprintf(stderr, "make_demo_models: %s is not a readable vocab GGUF\n", argv[1]);
        return 1;
    }
    uint64_t n_vocab = vocab->find("tokenizer.ggml.tokens")->value.array->count;
    auto weights = make_weights(n_vocab);
    std::string dir = argv[2];
    int failed = write_variant(*vocab, weights, GGML_TYPE_F32, 0, dir + "/tiny-llama-f32.gguf", "F32") |
        write_variant(*vocab, weights, GGML_TYPE_Q8_0, 7, dir + "/tiny-llama-q8_0.gguf", "Q8_0") |
        write_variant(*vocab, weights, GGML_TYPE_Q4_0, 2, dir + "/tiny-llama-q4_0.gguf", "Q4_0");
    if (failed) return failed;
    if (!mlens::demo::write_ollama_demo_models(dir)) return 1;
    return mlens::demo::write_demo_store(dir + "/ollama-store", dir + "/tiny-llama-q4_0.gguf") ? 0 : 1;
}
