#include "demo_blobs.h"

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "demo_source.h"
#include "mlens/formats/safetensors_writer.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/mlx_quant.h"

namespace mlens::demo {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

bool StoreWriter::blob(const std::string& media_type, const std::vector<uint8_t>& bytes, Layer& out, const std::string& name) const {
    fs::path tmp = m_root / "blobs" / "incoming.tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!f) return false;
    }
    Result<FileHash> hash = sha256_file(tmp.string());
    if (!hash) return false;
    std::error_code ec;
    fs::rename(tmp, m_root / "blobs" / ("sha256-" + hash->hex), ec);
    out = {media_type, "sha256:" + hash->hex, bytes.size(), name};
    return !ec;
}

bool StoreWriter::text(const std::string& media_type, const std::string& text, Layer& out, const std::string& name) const {
    return blob(media_type, std::vector<uint8_t>(text.begin(), text.end()), out, name);
}

bool StoreWriter::manifest(const std::string& model, const std::string& tag, const Layer& config, const std::vector<Layer>& layers) const {
    auto layer_json = [](const Layer& l) {
        Json j = {{"mediaType", l.media_type}, {"digest", l.digest}, {"size", l.size}};
        if (!l.name.empty()) j["name"] = l.name;
        return j;
    };
    Json j = {{"schemaVersion", 2},
              {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
              {"config", layer_json(config)},
              {"layers", Json::array()}};
    for (const Layer& l : layers) j["layers"].push_back(layer_json(l));
    fs::path dir = m_root / "manifests" / "registry.ollama.ai" / "library" / model;
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::ofstream f(dir / tag, std::ios::binary | std::ios::trunc);
    f << j.dump();
    return !ec && static_cast<bool>(f);
}

std::string safetensors_config(const std::string& family, const std::string& model_type, const std::string& file_type) {
    Json cfg = {{"model_format", "safetensors"},  {"model_family", family}, {"model_families", {family}},
                {"model_type", model_type},       {"file_type", file_type}, {"requires", "0.19.0"},
                {"capabilities", {"completion"}}, {"architecture", ""},     {"os", ""}};
    return cfg.dump();
}

namespace {

uint64_t product(const std::vector<uint64_t>& shape) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
}

// The float as stored in a 2-byte dtype, and back.
uint16_t half_bits(SafetensorsDtype dtype, float v) {
    return dtype == SafetensorsDtype::bf16 ? ggml_fp32_to_bf16(v).bits : ggml_fp32_to_fp16(v);
}
float half_value(SafetensorsDtype dtype, uint16_t bits) {
    if (dtype == SafetensorsDtype::f16) return ggml_fp16_to_fp32(bits);
    ggml_bf16_t b;
    b.bits = bits;
    return ggml_bf16_to_fp32(b);
}

}  // namespace

void TensorBlob::add(const std::string& name, SafetensorsDtype dtype, std::vector<uint64_t> shape, const void* data, uint64_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    m_entries[name] = Entry{dtype, std::move(shape), std::vector<uint8_t>(p, p + bytes)};
}

void TensorBlob::plain(const std::string& name, SafetensorsDtype dtype, std::vector<uint64_t> shape) {
    std::vector<float> values = demo_source_values(name, product(shape));
    if (dtype == SafetensorsDtype::f32) {
        add(name, dtype, std::move(shape), values.data(), values.size() * 4);
        return;
    }
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i) halves[i] = half_bits(dtype, values[i]);
    add(name, dtype, std::move(shape), halves.data(), halves.size() * 2);
}

bool TensorBlob::quantized(const std::string& name, std::vector<uint64_t> shape, const QuantSpec& spec) {
    const QuantParams* params = quant_params(spec.type);
    const uint64_t cols = shape.empty() ? 0 : shape.back();
    if (!params || spec.group_size == 0 || cols % spec.group_size != 0 || cols * params->bits % 32 != 0) {
        std::fprintf(stderr, "make_demo_models: %s: shape does not fit %s groups of %llu\n", name.c_str(), spec.type.c_str(),
                     static_cast<unsigned long long>(spec.group_size));
        return false;
    }
    const MlxMode mode = *mlx_mode_from_name(params->mode);
    const uint32_t bits = params->bits;
    std::vector<float> values = demo_source_values(name, product(shape));
    const uint64_t groups = values.size() / spec.group_size;
    std::vector<uint64_t> packed_shape = shape, scale_shape = shape;
    packed_shape.back() = cols * bits / 32;
    scale_shape.back() = cols / spec.group_size;

    if (mode == MlxMode::affine) {
        const float levels = static_cast<float>((1u << bits) - 1);
        std::vector<uint32_t> packed(values.size() * bits / 32, 0);
        std::vector<uint16_t> scales(groups), biases(groups);
        for (uint64_t g = 0; g < groups; ++g) {
            const float* v = values.data() + g * spec.group_size;
            auto [lo, hi] = std::minmax_element(v, v + spec.group_size);
            scales[g] = half_bits(spec.affine_dtype, (*hi - *lo) / levels);
            biases[g] = half_bits(spec.affine_dtype, *lo);
            const float scale = half_value(spec.affine_dtype, scales[g]), bias = half_value(spec.affine_dtype, biases[g]);
            for (uint64_t j = 0; j < spec.group_size; ++j) {
                float code = scale > 0 ? std::nearbyint((v[j] - bias) / scale) : 0.0f;
                uint64_t index = g * spec.group_size + j;
                packed[index * bits / 32] |= static_cast<uint32_t>(std::clamp(code, 0.0f, levels)) << (index * bits % 32);
            }
        }
        add(name, SafetensorsDtype::u32, packed_shape, packed.data(), packed.size() * 4);
        add(name + ".scale", spec.affine_dtype, scale_shape, scales.data(), scales.size() * 2);
        add(name + ".bias", spec.affine_dtype, scale_shape, biases.data(), biases.size() * 2);
        return true;
    }

    if (spec.global_scale) {
        float amax = 0;
        for (float v : values) amax = std::max(amax, std::fabs(v));
        const float global = amax / (448.0f * 6.0f);
        for (float& v : values) v /= global;
        add(name + ".global_scale", SafetensorsDtype::f32, {}, &global, 4);
    }
    Result<MlxQuantized> q = mlx_quantize(mode, bits, spec.group_size, values.data(), values.size());
    if (!q) {
        std::fprintf(stderr, "make_demo_models: %s: %s\n", name.c_str(), q.error().to_string().c_str());
        return false;
    }
    add(name, SafetensorsDtype::u32, packed_shape, q->packed.data(), q->packed.size() * 4);
    add(name + ".scale", SafetensorsDtype::u8, scale_shape, q->scale_bytes.data(), q->scale_bytes.size());
    return true;
}

void TensorBlob::tensor_keys(const std::string& name, const std::string& type, uint64_t group_size) {
    meta(name + ".quant_type", type);
    meta(name + ".group_size", std::to_string(group_size));
}

bool TensorBlob::write(const StoreWriter& store, const std::string& layer_name, Layer& out) const {
    Model model;
    model.format = Format::safetensors;
    for (const auto& [key, value] : m_meta) {
        MetadataEntry e;
        e.key = key;
        e.value = Value::of_string(value);
        model.metadata.push_back(std::move(e));
    }
    std::vector<uint8_t> data;
    for (const auto& [name, entry] : m_entries) {
        TensorInfo t;
        t.name = name;
        t.type = safetensors_storage_type(entry.dtype);
        t.ne.assign(entry.shape.rbegin(), entry.shape.rend());
        t.n_elements = product(entry.shape);
        t.n_bytes = entry.bytes.size();
        t.relative_offset = data.size();
        data.insert(data.end(), entry.bytes.begin(), entry.bytes.end());
        model.tensors.push_back(std::move(t));
    }
    Result<std::string> header = safetensors_header_text(model);
    if (!header) {
        std::fprintf(stderr, "make_demo_models: %s: %s\n", layer_name.c_str(), header.error().to_string().c_str());
        return false;
    }
    std::string text = std::move(*header);
    if (m_null_metadata) {
        text.erase(text.find_last_not_of(' ') + 1);
        text.insert(1, "\"__metadata__\":null,");
        text.append((8 - text.size() % 8) % 8, ' ');
    }
    std::vector<uint8_t> bytes(8 + text.size() + data.size());
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
    std::memcpy(bytes.data() + 8, text.data(), text.size());
    if (!data.empty()) std::memcpy(bytes.data() + 8 + text.size(), data.data(), data.size());
    return store.blob(kTensorLayer, bytes, out, layer_name);
}

}  // namespace mlens::demo
