#include "tiny_models.h"

#include <ggml.h>

#include <algorithm>
#include <stdexcept>

#include "mlens/compat/value_builders.h"
#include "mlens/formats/gguf_reader.h"
#include "model_fixture.h"
#include "test_paths.h"

namespace mlens::test {

namespace {

constexpr uint32_t kF32 = GGML_TYPE_F32, kF16 = GGML_TYPE_F16, kQ8_0 = GGML_TYPE_Q8_0;

class Builder {
public:
    explicit Builder(TinyModel& m) : m_m(m) {}
    Builder& kv(std::string key, Value v) {
        MetadataEntry e;
        e.key = std::move(key);
        e.value = std::move(v);
        m_m.metadata.push_back(std::move(e));
        return *this;
    }
    Builder& u32(std::string key, uint32_t v) { return kv(std::move(key), Value::of_u32(v)); }
    Builder& f32(std::string key, float v) { return kv(std::move(key), compat::value_f32(v)); }
    Builder& str(std::string key, std::string v) { return kv(std::move(key), compat::value_string(std::move(v))); }
    Builder& tensor(std::string name, uint32_t type, std::vector<uint64_t> ne, bool norm = false) {
        uint64_t n = 1;
        for (uint64_t d : ne) n *= d;
        std::vector<float> v = test_signal(n, ++m_seed);
        for (float& x : v) x = norm ? 1.0f + 0.1f * x : 0.5f * x;
        m_m.tensors.push_back({std::move(name), type, std::move(ne), std::move(v)});
        return *this;
    }

private:
    TinyModel& m_m;
    uint32_t m_seed = 0;
};

// Ollama's GGUF writer sorts the keys by the key with its "<arch>." prefix removed.
void sort_keys_like_ollama(TinyModel& m) {
    std::string prefix;
    for (const MetadataEntry& e : m.metadata)
        if (e.key == "general.architecture") prefix = e.value.string_value() + ".";
    auto map_key = [&](const std::string& k) { return k.starts_with(prefix) ? k.substr(prefix.size()) : k; };
    std::stable_sort(m.metadata.begin(), m.metadata.end(),
                     [&](const MetadataEntry& a, const MetadataEntry& b) { return map_key(a.key) < map_key(b.key); });
}

const Model& vocab(const std::string& name) {
    static std::vector<std::pair<std::string, Model>> cache;
    for (const auto& [n, m] : cache)
        if (n == name) return m;
    auto m = open_gguf(llama_source_dir() + "/models/" + name);
    if (!m) throw std::runtime_error("cannot open vocab " + name);
    cache.emplace_back(name, std::move(*m));
    return cache.back().second;
}

}  // namespace

TinyModel tiny_llama3(TinyLayout layout) {
    const bool ollama = layout == TinyLayout::ollama;
    const Model& v = vocab("ggml-vocab-llama-bpe.gguf");
    const uint64_t n_vocab = v.find("tokenizer.ggml.tokens")->value.array->count;
    TinyModel m;
    Builder b(m);
    b.str("general.architecture", "llama")
        .u32("llama.context_length", 256)
        .u32("llama.embedding_length", 32)
        .u32("llama.block_count", 1)
        .u32("llama.feed_forward_length", 64)
        .u32("llama.attention.head_count", 4)
        .u32("llama.attention.head_count_kv", 2)
        .u32("llama.rope.dimension_count", 8)
        .f32("llama.rope.freq_base", 500000.0f)
        .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    for (const MetadataEntry& e : v.metadata) {
        if (!e.key.starts_with("tokenizer.") || e.key == "tokenizer.ggml.eos_token_id") continue;
        if (ollama && e.key == "tokenizer.ggml.pre") continue;
        b.kv(e.key, e.value);
    }
    b.u32("tokenizer.ggml.eos_token_id", ollama ? 128001 : 128009);
    if (!ollama) b.u32("tokenizer.ggml.eot_token_id", 128009).kv("tokenizer.ggml.eos_token_ids", compat::array_i32({128009}));
    b.tensor("token_embd.weight", kQ8_0, {32, n_vocab})
        .tensor("blk.0.attn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.attn_q.weight", kF16, {32, 32})
        .tensor("blk.0.attn_k.weight", kF16, {32, 16})
        .tensor("blk.0.attn_v.weight", kF16, {32, 16})
        .tensor("blk.0.attn_output.weight", kQ8_0, {32, 32})
        .tensor("blk.0.ffn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.ffn_gate.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_up.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_down.weight", kF32, {64, 32})
        .tensor("output_norm.weight", kF32, {32}, true);
    if (ollama) sort_keys_like_ollama(m);
    m.prompt = {128000, 9906, 1917, 11, 358, 1097, 264, 13340};
    return m;
}

TinyModel tiny_gemma3(TinyLayout layout) {
    const bool ollama = layout == TinyLayout::ollama;
    const Model& v = vocab("ggml-vocab-llama-spm.gguf");
    const uint64_t n_vocab = v.find("tokenizer.ggml.tokens")->value.array->count;
    TinyModel m;
    Builder b(m);
    b.str("general.architecture", "gemma3")
        .u32("gemma3.context_length", 256)
        .u32("gemma3.embedding_length", 32)
        .u32("gemma3.block_count", 1)
        .u32("gemma3.feed_forward_length", 64)
        .u32("gemma3.attention.head_count", 2)
        .u32("gemma3.attention.head_count_kv", 1)
        .u32("gemma3.attention.key_length", 16)
        .u32("gemma3.attention.value_length", 16);
    if (!ollama)
        b.f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f)
            .f32("gemma3.rope.freq_base", 1000000.0f)
            .f32("gemma3.rope.freq_base_swa", 10000.0f);
    for (const MetadataEntry& e : v.metadata) {
        if (!e.key.starts_with("tokenizer.")) continue;
        if (!ollama || !e.value.is_array()) {
            b.kv(e.key, e.value);
            continue;
        }
        // Ollama kept the extra image tokens in the tokenizer arrays.
        if (auto strings = compat::array_strings_of(e.value)) {
            for (int i = 0; i < 4; ++i) strings->push_back("<image_soft_token_" + std::to_string(i) + ">");
            b.kv(e.key, compat::array_strings(*strings));
        } else if (auto scalars = compat::array_scalars(e.value); scalars && e.key == "tokenizer.ggml.scores") {
            std::vector<float> f;
            for (const Scalar& s : *scalars) f.push_back(static_cast<float>(s.as_double()));
            f.insert(f.end(), 4, 0.0f);
            b.kv(e.key, compat::array_f32(f));
        } else if (scalars && e.key == "tokenizer.ggml.token_type") {
            std::vector<int32_t> t;
            for (const Scalar& s : *scalars) t.push_back(static_cast<int32_t>(s.as_int()));
            t.insert(t.end(), 4, 4);
            b.kv(e.key, compat::array_i32(t));
        } else {
            b.kv(e.key, e.value);
        }
    }
    b.tensor("token_embd.weight", kQ8_0, {32, n_vocab})
        .tensor("blk.0.attn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.attn_q.weight", kF16, {32, 32})
        .tensor("blk.0.attn_k.weight", kF16, {32, 16})
        .tensor("blk.0.attn_v.weight", kF16, {32, 16})
        .tensor("blk.0.attn_q_norm.weight", kF32, {16}, true)
        .tensor("blk.0.attn_k_norm.weight", kF32, {16}, true)
        .tensor("blk.0.attn_output.weight", kF16, {32, 32})
        .tensor("blk.0.post_attention_norm.weight", kF32, {32}, true)
        .tensor("blk.0.ffn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.ffn_gate.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_up.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_down.weight", kF16, {64, 32})
        .tensor("blk.0.post_ffw_norm.weight", kF32, {32}, true)
        .tensor("output_norm.weight", kF32, {32}, true);
    if (ollama)
        b.tensor("v.patch_embedding.weight", kF16, {14, 14, 3, 32})
            .tensor("v.blk.0.layer_norm1.weight", kF32, {32}, true)
            .tensor("mm.mm_input_projection.weight", kF16, {32, 32});
    if (ollama) sort_keys_like_ollama(m);
    m.prompt = {1, 450, 4996, 17354, 1701, 432, 17204, 975};
    return m;
}

TinyModel tiny_lfm2(TinyLayout layout) {
    const bool ollama = layout == TinyLayout::ollama;
    const Model& v = vocab("ggml-vocab-llama-bpe.gguf");
    const uint64_t n_vocab = v.find("tokenizer.ggml.tokens")->value.array->count;
    TinyModel m;
    Builder b(m);
    b.str("general.architecture", "lfm2")
        .u32("lfm2.context_length", 256)
        .u32("lfm2.embedding_length", 32)
        .u32("lfm2.block_count", 2)
        .u32("lfm2.feed_forward_length", ollama ? 96 : 64)
        .u32("lfm2.attention.head_count", 4)
        .kv("lfm2.attention.head_count_kv", compat::array_i32({0, 2}))
        .u32("lfm2.shortconv.l_cache", 3)
        .f32("lfm2.rope.freq_base", 1000000.0f)
        .f32("lfm2.attention.layer_norm_rms_epsilon", 1e-5f);
    for (const MetadataEntry& e : v.metadata) {
        if (!e.key.starts_with("tokenizer.")) continue;
        if (e.key == "tokenizer.ggml.pre") {
            if (!ollama) b.str("tokenizer.ggml.pre", "lfm2");
            continue;
        }
        b.kv(e.key, e.value);
    }
    b.tensor("token_embd.weight", kQ8_0, {32, n_vocab})
        .tensor("blk.0.attn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.shortconv.conv.weight", kF32, {3, 32})
        .tensor("blk.0.shortconv.in_proj.weight", kF16, {32, 96})
        .tensor("blk.0.shortconv.out_proj.weight", kF16, {32, 32})
        .tensor("blk.0.ffn_norm.weight", kF32, {32}, true)
        .tensor("blk.0.ffn_gate.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_up.weight", kF16, {32, 64})
        .tensor("blk.0.ffn_down.weight", kF32, {64, 32})
        .tensor("blk.1.attn_norm.weight", kF32, {32}, true)
        .tensor("blk.1.attn_q.weight", kF16, {32, 32})
        .tensor("blk.1.attn_k.weight", kF16, {32, 16})
        .tensor("blk.1.attn_v.weight", kF16, {32, 16})
        .tensor("blk.1.attn_q_norm.weight", kF32, {8}, true)
        .tensor("blk.1.attn_k_norm.weight", kF32, {8}, true)
        .tensor("blk.1.attn_output.weight", kF16, {32, 32})
        .tensor("blk.1.ffn_norm.weight", kF32, {32}, true)
        .tensor("blk.1.ffn_gate.weight", kF16, {32, 64})
        .tensor("blk.1.ffn_up.weight", kF16, {32, 64})
        .tensor("blk.1.ffn_down.weight", kF32, {64, 32})
        .tensor(ollama ? "output_norm.weight" : "token_embd_norm.weight", kF32, {32}, true);
    if (ollama) sort_keys_like_ollama(m);
    m.prompt = {128000, 9906, 1917, 11, 358, 1097, 264, 13340};
    return m;
}

TinyModel tiny_gptoss(TinyLayout layout) {
    const bool ollama = layout == TinyLayout::ollama;
    const Model& v = vocab("ggml-vocab-llama-bpe.gguf");
    const uint64_t n_vocab = v.find("tokenizer.ggml.tokens")->value.array->count;
    const std::string p = ollama ? "gptoss." : "gpt-oss.";
    TinyModel m;
    Builder b(m);
    b.str("general.architecture", ollama ? "gptoss" : "gpt-oss")
        .u32(p + "context_length", 256)
        .u32(p + "embedding_length", 32)
        .u32(p + "block_count", 2)
        .u32(p + "feed_forward_length", 32)
        .u32(p + "attention.head_count", 4)
        .u32(p + "attention.head_count_kv", 2)
        .u32(p + "attention.key_length", 8)
        .u32(p + "attention.value_length", 8)
        .u32(p + "rope.dimension_count", 8)
        .f32(p + "rope.freq_base", 150000.0f)
        .f32(p + "attention.layer_norm_rms_epsilon", 1e-5f)
        .u32(p + "attention.sliding_window", 128)
        .u32(p + "expert_count", 4)
        .u32(p + "expert_used_count", 2);
    if (!ollama) b.u32(p + "expert_feed_forward_length", 32).str(p + "rope.scaling.type", "yarn");
    for (const MetadataEntry& e : v.metadata) {
        if (!e.key.starts_with("tokenizer.")) continue;
        if (e.key == "tokenizer.ggml.pre") {
            if (!ollama) b.str("tokenizer.ggml.pre", "gpt-4o");
            continue;
        }
        b.kv(e.key, e.value);
    }
    b.tensor("token_embd.weight", kQ8_0, {32, n_vocab});
    for (int i = 0; i < 2; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        b.tensor(blk + "attn_norm.weight", kF32, {32}, true)
            .tensor(blk + "attn_q.weight", kF16, {32, 32})
            .tensor(blk + "attn_q.bias", kF32, {32})
            .tensor(blk + "attn_k.weight", kF16, {32, 16})
            .tensor(blk + "attn_k.bias", kF32, {16})
            .tensor(blk + "attn_v.weight", kF16, {32, 16})
            .tensor(blk + "attn_v.bias", kF32, {16})
            .tensor(blk + (ollama ? "attn_out.weight" : "attn_output.weight"), kF16, {32, 32})
            .tensor(blk + (ollama ? "attn_out.bias" : "attn_output.bias"), kF32, {32})
            .tensor(blk + (ollama ? "attn_sinks" : "attn_sinks.weight"), kF32, {4})
            .tensor(blk + (ollama ? "ffn_norm.weight" : "post_attention_norm.weight"), kF32, {32}, true)
            .tensor(blk + "ffn_gate_inp.weight", kF32, {32, 4})
            .tensor(blk + "ffn_gate_inp.bias", kF32, {4})
            .tensor(blk + "ffn_gate_exps.weight", kF16, {32, 32, 4})
            .tensor(blk + "ffn_gate_exps.bias", kF32, {32, 4})
            .tensor(blk + "ffn_up_exps.weight", kF16, {32, 32, 4})
            .tensor(blk + "ffn_up_exps.bias", kF32, {32, 4})
            .tensor(blk + "ffn_down_exps.weight", kF16, {32, 32, 4})
            .tensor(blk + "ffn_down_exps.bias", kF32, {32, 4});
    }
    b.tensor("output_norm.weight", kF32, {32}, true).tensor("output.weight", kQ8_0, {32, n_vocab});
    if (ollama) sort_keys_like_ollama(m);
    m.prompt = {128000, 9906, 1917, 11, 358, 1097, 264, 13340};
    return m;
}

void write_tiny_model(const TinyModel& tiny, const std::string& path) {
    std::vector<FixtureTensor> tensors;
    for (const TinyTensor& t : tiny.tensors) tensors.push_back({t.name, t.ggml_type, t.ne, t.values});
    write_fixture_gguf(path, tiny.metadata, tensors);
}

}  // namespace mlens::test
