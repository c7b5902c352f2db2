#include "demo_store.h"

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_writer.h"
#include "mlens/ollama/blob_hash.h"

namespace mlens::demo {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr uint64_t kHidden = 64, kExperts = 4, kVocab = 32, kGroup = 64;

struct Layer {
    std::string media_type;
    std::string digest;
    uint64_t size = 0;
    std::string name;
};

// Writes `bytes` as blobs/sha256-<hex> and returns its layer.
bool write_blob(const fs::path& root, const std::string& media_type, const std::vector<uint8_t>& bytes, Layer& out,
                const std::string& name = {}) {
    fs::path tmp = root / "blobs" / "incoming.tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!f) return false;
    }
    Result<FileHash> hash = sha256_file(tmp.string());
    if (!hash) return false;
    std::error_code ec;
    fs::rename(tmp, root / "blobs" / ("sha256-" + hash->hex), ec);
    out = {media_type, "sha256:" + hash->hex, bytes.size(), name};
    return !ec;
}

bool write_text_blob(const fs::path& root, const std::string& media_type, const std::string& text, Layer& out) {
    return write_blob(root, media_type, std::vector<uint8_t>(text.begin(), text.end()), out);
}

Json layer_json(const Layer& l) {
    Json j = {{"mediaType", l.media_type}, {"digest", l.digest}, {"size", l.size}};
    if (!l.name.empty()) j["name"] = l.name;
    return j;
}

bool write_manifest(const fs::path& root, const std::string& model, const std::string& tag, const Layer& config,
                    const std::vector<Layer>& layers) {
    Json j = {{"schemaVersion", 2}, {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
              {"config", layer_json(config)}, {"layers", Json::array()}};
    for (const Layer& l : layers) j["layers"].push_back(layer_json(l));
    fs::path dir = root / "manifests" / "registry.ollama.ai" / "library" / model;
    fs::create_directories(dir);
    std::ofstream f(dir / tag, std::ios::binary | std::ios::trunc);
    f << j.dump();
    return static_cast<bool>(f);
}

class Random {
public:
    explicit Random(uint64_t seed) : m_state(seed) {}
    float normalish(float scale) {
        float s = 0;
        for (int i = 0; i < 4; ++i) s += uniform();
        return scale * (s - 2.0f);
    }

private:
    float uniform() {
        m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>(m_state >> 40) / static_cast<float>(1ull << 24);
    }
    uint64_t m_state;
};

// Tensors of one safetensors blob, gathered before writing.
class BlobTensors {
public:
    void add(const std::string& name, SafetensorsDtype dtype, std::vector<uint64_t> shape, const void* data, uint64_t bytes) {
        TensorInfo t;
        t.name = name;
        t.type = safetensors_storage_type(dtype);
        t.ne.assign(shape.rbegin(), shape.rend());
        t.n_elements = 1;
        for (uint64_t d : shape) t.n_elements *= d;
        t.n_bytes = bytes;
        t.data_offset = m_data.size();
        const auto* p = static_cast<const uint8_t*>(data);
        m_data.insert(m_data.end(), p, p + bytes);
        m_model.tensors.push_back(std::move(t));
    }
    void meta(const std::string& key, const std::string& value) {
        MetadataEntry e;
        e.key = key;
        e.value = Value::of_string(value);
        m_model.metadata.push_back(std::move(e));
    }
    // Writes the blob through a temporary file and returns its layer.
    bool write(const fs::path& root, const std::string& name, Layer& out) {
        m_model.format = Format::safetensors;
        SourceFile f;
        f.source = memory_source(m_data, "demo");
        m_model.files.push_back(f);
        fs::path tmp = root / "blobs" / "tensor.tmp";
        Status s = write_safetensors(m_model, tmp.string());
        if (!s) {
            std::fprintf(stderr, "make_demo_models: %s: %s\n", name.c_str(), s.error().to_string().c_str());
            return false;
        }
        std::ifstream in(tmp, std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        fs::remove(tmp);
        return write_blob(root, "application/vnd.ollama.image.tensor", bytes, out, name);
    }

private:
    Model m_model;
    std::vector<uint8_t> m_data;
};

uint16_t to_f16(float v) { return ggml_fp32_to_fp16(v); }

// Affine int4 with one group per kGroup values: scale = (max - min) / 15, bias = min; codes packed
// eight to a U32, low bits first. Adds T (U32), T.scale and T.bias (F16) for a [rows..., cols] tensor.
void add_int4(BlobTensors& blob, const std::string& name, std::vector<uint64_t> shape, Random& rng, float spread) {
    uint64_t cols = shape.back();
    uint64_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    uint64_t groups = cols / kGroup;
    std::vector<uint32_t> packed(rows * cols / 8, 0);
    std::vector<uint16_t> scales(rows * groups), biases(rows * groups);
    std::vector<float> values(kGroup);
    for (uint64_t g = 0; g < rows * groups; ++g) {
        for (float& v : values) v = rng.normalish(spread);
        float lo = *std::min_element(values.begin(), values.end()), hi = *std::max_element(values.begin(), values.end());
        float scale = (hi - lo) / 15.0f;
        scales[g] = to_f16(scale);
        biases[g] = to_f16(lo);
        for (uint64_t k = 0; k < kGroup; ++k) {
            auto q = static_cast<uint32_t>(std::clamp(std::lround((values[k] - lo) / scale), 0L, 15L));
            uint64_t index = g * kGroup + k;
            packed[index / 8] |= q << (4 * (index % 8));
        }
    }
    std::vector<uint64_t> packed_shape = shape, scale_shape = shape;
    packed_shape.back() = cols / 8;
    scale_shape.back() = groups;
    blob.add(name, SafetensorsDtype::u32, packed_shape, packed.data(), packed.size() * 4);
    std::string stem = name.substr(0, name.size() - std::string(".weight").size());
    blob.add(stem + ".weight.scale", SafetensorsDtype::f16, scale_shape, scales.data(), scales.size() * 2);
    blob.add(stem + ".weight.bias", SafetensorsDtype::f16, scale_shape, biases.data(), biases.size() * 2);
}

bool gguf_model(const fs::path& root, const std::string& gguf_path) {
    std::ifstream in(gguf_path, std::ios::binary);
    std::vector<uint8_t> gguf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (gguf.empty()) return false;
    Layer model, tmpl, system, params, license, config;
    Json cfg = {{"model_format", "gguf"}, {"model_family", "llama"}, {"model_families", {"llama"}},
                {"model_type", "1.2M"}, {"file_type", "Q4_0"}, {"architecture", "amd64"}, {"os", "linux"}};
    bool ok = write_blob(root, "application/vnd.ollama.image.model", gguf, model) &&
              write_text_blob(root, "application/vnd.ollama.image.template",
                              "{{- if .System }}<<SYS>>{{ .System }}<</SYS>>{{ end }}\n[INST] {{ .Prompt }} [/INST]", tmpl) &&
              write_text_blob(root, "application/vnd.ollama.image.system", "You are a tiny demo model.", system) &&
              write_text_blob(root, "application/vnd.ollama.image.params", "{\"stop\":[\"</s>\",\"[INST]\"],\"temperature\":0.7}", params) &&
              write_text_blob(root, "application/vnd.ollama.image.license",
                              "ModelLens demo weights: seeded pseudo-random values, free to use.", license) &&
              write_text_blob(root, "application/vnd.docker.container.image.v1+json", cfg.dump(), config);
    return ok && write_manifest(root, "tiny-llama", "q4_0", config, {model, tmpl, system, params, license});
}

bool moe_model(const fs::path& root) {
    Random rng(7041);
    std::vector<Layer> layers;
    Layer layer;

    BlobTensors embed;
    std::vector<uint16_t> e(kVocab * kHidden);
    for (uint16_t& v : e) v = to_f16(rng.normalish(0.5f));
    embed.add("model.embed_tokens.weight", SafetensorsDtype::f16, {kVocab, kHidden}, e.data(), e.size() * 2);
    if (!embed.write(root, "model.embed_tokens.weight", layer)) return false;
    layers.push_back(layer);

    BlobTensors attention;
    attention.meta("quant_type", "int4");
    attention.meta("group_size", "64");
    add_int4(attention, "model.layers.0.self_attn.q_proj.weight", {kHidden, kHidden}, rng, 0.2f);
    if (!attention.write(root, "model.layers.0.self_attn.q_proj.weight", layer)) return false;
    layers.push_back(layer);

    BlobTensors experts;
    experts.meta("quant_type", "int4");
    experts.meta("group_size", "64");
    for (const char* part : {"gate_proj", "up_proj", "down_proj"})
        add_int4(experts, std::string("model.layers.0.mlp.experts.") + part + ".weight", {kExperts, kHidden, kHidden}, rng, 0.3f);
    if (!experts.write(root, "model.layers.0.mlp.experts", layer)) return false;
    layers.push_back(layer);

    Json hf = {{"architectures", {"Qwen3MoeForCausalLM"}}, {"model_type", "qwen3_moe"}, {"hidden_size", kHidden},
               {"num_experts", kExperts}, {"num_experts_per_tok", 2}, {"vocab_size", kVocab},
               {"quantization", {{"bits", 4}, {"group_size", kGroup}}}};
    std::string text = hf.dump(2);
    if (!write_blob(root, "application/vnd.ollama.image.json", std::vector<uint8_t>(text.begin(), text.end()), layer, "config.json"))
        return false;
    layers.push_back(layer);

    Layer config;
    Json cfg = {{"model_format", "safetensors"}, {"model_family", "qwen3moe"}, {"model_families", {"qwen3moe"}},
                {"model_type", "0.1M"}, {"file_type", "int4"}, {"architecture", "amd64"}, {"os", "linux"},
                {"capabilities", {"completion"}}};
    return write_text_blob(root, "application/vnd.docker.container.image.v1+json", cfg.dump(), config) &&
           write_manifest(root, "tiny-moe", "int4", config, layers);
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
    if (!gguf_model(root, gguf_model_path) || !moe_model(root)) {
        std::fprintf(stderr, "make_demo_models: writing the demo store %s failed\n", root_text.c_str());
        return false;
    }
    return true;
}

}  // namespace mlens::demo
