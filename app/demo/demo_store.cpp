#include "demo_store.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <vector>

#include "demo_blobs.h"

namespace mlens::demo {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Dtype = SafetensorsDtype;

constexpr uint64_t kHidden = 64, kKv = 32, kFf = 128, kExperts = 4, kVocab = 32;
const std::string kLicense = "ModelLens demo weights: seeded pseudo-random values, free to use.";

// The layers of one model as they are written, with the first failure remembered.
class ModelLayers {
public:
    explicit ModelLayers(const StoreWriter& store) : m_store(store) {}

    void tensor(const TensorBlob& blob, const std::string& layer_name) {
        Layer l;
        m_ok = m_ok && blob.write(m_store, layer_name, l);
        m_layers.push_back(l);
    }
    // A blob holding one unquantized tensor, named by it.
    void plain(const std::string& name, Dtype dtype, std::vector<uint64_t> shape) {
        TensorBlob blob;
        blob.plain(name, dtype, std::move(shape));
        tensor(blob, name);
    }
    // A blob holding one quantized tensor with blob-wide quant_type and (unless omitted) group_size.
    void quantized(const std::string& name, std::vector<uint64_t> shape, const QuantSpec& spec, bool group_key = true) {
        TensorBlob blob;
        check(blob.quantized(name, std::move(shape), spec));
        blob.meta("quant_type", spec.type);
        if (group_key) blob.meta("group_size", std::to_string(spec.group_size));
        tensor(blob, name);
    }
    void blob(const char* media_type, const std::vector<uint8_t>& bytes) {
        Layer l;
        m_ok = m_ok && m_store.blob(media_type, bytes, l);
        m_layers.push_back(l);
    }
    void hf_config(const Json& config) { text(kJsonLayer, config.dump(2), "config.json"); }
    void text(const char* media_type, const std::string& text, const std::string& name = {}) {
        Layer l;
        m_ok = m_ok && m_store.text(media_type, text, l, name);
        m_layers.push_back(l);
    }
    bool finish(const std::string& model, const std::string& tag, const std::string& config_text) {
        Layer config;
        return m_ok && m_store.text(kConfigLayer, config_text, config) && m_store.manifest(model, tag, config, m_layers);
    }
    void check(bool ok) { m_ok = m_ok && ok; }

private:
    const StoreWriter& m_store;
    std::vector<Layer> m_layers;
    bool m_ok = true;
};

const char* kChatTemplate =
    "{{- if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}"
    "<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n";

Json moe_hf_config(const char* architecture, const char* model_type, bool shared) {
    Json hf = {{"architectures", {architecture}},  {"model_type", model_type}, {"hidden_size", kHidden},   {"num_hidden_layers", 1},
               {"moe_intermediate_size", kHidden}, {"num_experts", kExperts},  {"num_experts_per_tok", 2}, {"vocab_size", kVocab}};
    if (shared) hf["n_shared_experts"] = 1;
    return hf;
}

bool gguf_model(const StoreWriter& store, const std::string& gguf_path) {
    std::ifstream in(gguf_path, std::ios::binary);
    std::vector<uint8_t> gguf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (gguf.empty()) return false;
    ModelLayers m(store);
    m.blob(kModelLayer, gguf);
    m.text(kTemplateLayer, "{{- if .System }}<<SYS>>{{ .System }}<</SYS>>{{ end }}\n[INST] {{ .Prompt }} [/INST]");
    m.text(kSystemLayer, "You are a tiny demo model.");
    m.text(kParamsLayer, "{\"stop\":[\"</s>\",\"[INST]\"],\"temperature\":0.7}");
    m.text(kLicenseLayer, kLicense);
    Json cfg = {{"model_format", "gguf"}, {"model_family", "llama"}, {"model_families", {"llama"}},
                {"model_type", "4.2M"},   {"file_type", "Q4_0"},     {"architecture", "amd64"},
                {"os", "linux"}};
    return m.finish("tiny-llama", "q4_0", cfg.dump());
}

// A dense layer whose tensors each have their own blob and their own quantization: every MLX
// mode, int4 in both group sizes, and a prequantized (ModelOpt) nvfp4 projection with a global
// scale and no group_size key.
bool mixed_model(const StoreWriter& store) {
    ModelLayers m(store);
    const std::string p = "model.layers.0.";
    m.plain("model.embed_tokens.weight", Dtype::bf16, {kVocab, kHidden});
    m.plain(p + "input_layernorm.weight", Dtype::bf16, {kHidden});
    m.quantized(p + "self_attn.q_proj.weight", {kHidden, kHidden}, {"int4", 64});
    m.quantized(p + "self_attn.k_proj.weight", {kKv, kHidden}, {"int8", 64});
    m.quantized(p + "self_attn.v_proj.weight", {kKv, kHidden}, {"int4", 32, Dtype::f16});
    m.quantized(p + "self_attn.o_proj.weight", {kHidden, kHidden}, {"nvfp4", 16, Dtype::bf16, true}, false);
    m.plain(p + "post_attention_layernorm.weight", Dtype::bf16, {kHidden});
    m.quantized(p + "mlp.gate_proj.weight", {kFf, kHidden}, {"nvfp4", 16});
    m.quantized(p + "mlp.up_proj.weight", {kFf, kHidden}, {"mxfp4", 32});
    m.quantized(p + "mlp.down_proj.weight", {kHidden, kFf}, {"mxfp8", 32});
    m.plain("model.norm.weight", Dtype::bf16, {kHidden});
    m.quantized("lm_head.weight", {kVocab, kHidden}, {"int8", 64});
    m.hf_config({{"architectures", {"Qwen3ForCausalLM"}},
                 {"model_type", "qwen3"},
                 {"hidden_size", kHidden},
                 {"intermediate_size", kFf},
                 {"num_hidden_layers", 1},
                 {"num_attention_heads", 4},
                 {"num_key_value_heads", 2},
                 {"head_dim", 16},
                 {"vocab_size", kVocab},
                 {"tie_word_embeddings", false}});
    m.text(kTemplateLayer, kChatTemplate);
    m.text(kParamsLayer, "{\"stop\":[\"<|im_end|>\"],\"temperature\":0.6,\"top_p\":0.95}");
    m.text(kLicenseLayer, kLicense);
    return m.finish("tiny-mlx", "mixed", safetensors_config("qwen3", "41.2K", "int4"));
}

// Current layout: every projection of the expert group stacked and in one blob named by the group.
bool moe_model(const StoreWriter& store) {
    ModelLayers m(store);
    m.plain("model.embed_tokens.weight", Dtype::f16, {kVocab, kHidden});
    m.quantized("model.layers.0.self_attn.q_proj.weight", {kHidden, kHidden}, {"int4", 64, Dtype::f16});
    TensorBlob experts;
    experts.meta("quant_type", "int4");
    experts.meta("group_size", "64");
    for (const char* part : {"gate_proj", "up_proj", "down_proj"})
        m.check(experts.quantized(std::string("model.layers.0.mlp.experts.") + part + ".weight", {kExperts, kHidden, kHidden},
                                  {"int4", 64, Dtype::f16}));
    m.tensor(experts, "model.layers.0.mlp.experts");
    Json hf = moe_hf_config("Qwen3MoeForCausalLM", "qwen3_moe", false);
    hf["quantization"] = {{"bits", 4}, {"group_size", 64}};
    m.hf_config(hf);
    return m.finish("tiny-moe", "int4", safetensors_config("qwen3moe", "55.3K", "int4"));
}

// Current layout with per-projection quantization (int4, down_proj promoted to int8): one blob
// per stacked tensor, and the shared expert one blob per tensor.
bool shared_moe_model(const StoreWriter& store) {
    ModelLayers m(store);
    m.plain("model.embed_tokens.weight", Dtype::bf16, {kVocab, kHidden});
    m.plain("model.layers.0.mlp.gate.weight", Dtype::bf16, {kExperts, kHidden});
    for (const char* group : {"experts", "shared_experts"}) {
        std::vector<uint64_t> shape = {kHidden, kHidden};
        if (std::string(group) == "experts") shape.insert(shape.begin(), kExperts);
        for (const char* part : {"gate_proj", "up_proj", "down_proj"}) {
            QuantSpec spec = std::string(part) == "down_proj" ? QuantSpec{"int8", 64} : QuantSpec{"int4", 64};
            m.quantized(std::string("model.layers.0.mlp.") + group + "." + part + ".weight", shape, spec);
        }
    }
    m.hf_config(moe_hf_config("DeepseekV2ForCausalLM", "deepseek_v2", true));
    m.text(kSystemLayer, "You are a tiny mixture-of-experts demo model.");
    m.text(kParamsLayer, "{\"temperature\":0.8}");
    m.text(kLicenseLayer, kLicense);
    return m.finish("tiny-moe-shared", "int4", safetensors_config("deepseek2", "63.7K", "int4"));
}

// 2026-02 to 2026-03 layout: per-expert 2-D tensors, not stacked, packed in one blob per group
// (shared experts too), int4 with that era's group size 32 and a null __metadata__ in group blobs.
bool per_expert_model(const StoreWriter& store) {
    ModelLayers m(store);
    m.plain("model.embed_tokens.weight", Dtype::bf16, {kVocab, kHidden});
    m.quantized("model.layers.0.self_attn.q_proj.weight", {kHidden, kHidden}, {"int4", 32});
    TensorBlob experts, shared;
    for (uint64_t e = 0; e < kExperts; ++e)
        for (const char* part : {"gate_proj", "up_proj", "down_proj"})
            m.check(experts.quantized("model.layers.0.mlp.experts." + std::to_string(e) + "." + part + ".weight", {kHidden, kHidden},
                                      {"int4", 32}));
    for (const char* part : {"gate_proj", "up_proj", "down_proj"})
        m.check(shared.quantized(std::string("model.layers.0.mlp.shared_experts.") + part + ".weight", {kHidden, kHidden}, {"int4", 32}));
    experts.null_metadata();
    shared.null_metadata();
    m.tensor(experts, "model.layers.0.mlp.experts");
    m.tensor(shared, "model.layers.0.mlp.shared_experts");
    m.hf_config(moe_hf_config("DeepseekV2ForCausalLM", "deepseek_v2", true));
    m.text(kTemplateLayer, kChatTemplate);
    m.text(kLicenseLayer, kLicense);
    return m.finish("tiny-moe-legacy", "per-expert", safetensors_config("deepseek2", "67.6K", "int4"));
}

// 2026-03 to 2026-07 layout: experts stacked on import into switch_mlp tensors, in a blob still
// named "...mlp.experts"; mixed precision (down_proj int8) with per-tensor keys only, while the
// uniform single-tensor blob of that era carries both key kinds.
bool switch_mlp_model(const StoreWriter& store) {
    ModelLayers m(store);
    m.plain("model.embed_tokens.weight", Dtype::bf16, {kVocab, kHidden});
    TensorBlob q_proj;
    const std::string q = "model.layers.0.self_attn.q_proj.weight";
    m.check(q_proj.quantized(q, {kHidden, kHidden}, {"int4", 64}));
    q_proj.meta("quant_type", "int4");
    q_proj.meta("group_size", "64");
    q_proj.tensor_keys(q, "int4", 64);
    m.tensor(q_proj, q);
    TensorBlob experts;
    for (const char* part : {"gate_proj", "up_proj", "down_proj"}) {
        QuantSpec spec = std::string(part) == "down_proj" ? QuantSpec{"int8", 64} : QuantSpec{"int4", 64};
        std::string name = std::string("model.layers.0.mlp.switch_mlp.") + part + ".weight";
        m.check(experts.quantized(name, {kExperts, kHidden, kHidden}, spec));
        experts.tensor_keys(name, spec.type, spec.group_size);
    }
    m.tensor(experts, "model.layers.0.mlp.experts");
    m.hf_config(moe_hf_config("Qwen3MoeForCausalLM", "qwen3_moe", false));
    m.text(kLicenseLayer, kLicense);
    return m.finish("tiny-moe-legacy", "switch-mlp", safetensors_config("qwen3moe", "55.3K", "int4"));
}

}  // namespace

bool write_demo_store(const std::string& root_text, const std::string& gguf_model_path) {
    fs::path root(root_text);
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root / "blobs", ec);
    fs::create_directories(root / "manifests", ec);
    if (ec) {
        std::fprintf(stderr, "make_demo_models: cannot create %s\n", root_text.c_str());
        return false;
    }
    StoreWriter store(root);
    if (!gguf_model(store, gguf_model_path) || !mixed_model(store) || !moe_model(store) || !shared_moe_model(store) ||
        !per_expert_model(store) || !switch_mlp_model(store)) {
        std::fprintf(stderr, "make_demo_models: writing the demo store %s failed\n", root_text.c_str());
        return false;
    }
    return true;
}

}  // namespace mlens::demo
