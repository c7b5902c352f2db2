// Writers behind the demo Ollama store (demo_store.h): blobs named by their sha256, manifests,
// config blobs, and safetensors tensor blobs laid out as Ollama's MLX engine stores them
// (ollama-store.md §3, §4.3, §4.4), filled from the seeded sources of demo_source.h.
//
// Contract:
//  - StoreWriter::blob writes blobs/sha256-<hex of the bytes> (through a temporary file in blobs/
//    that is hashed with core sha256_file and renamed) and returns its layer. text() is the same
//    for a text layer (template, system, params, license, config, HF JSON).
//  - StoreWriter::manifest writes manifests/registry.ollama.ai/library/<model>/<tag> as compact
//    JSON: schemaVersion 2, the docker v2 manifest media type, config, layers (mediaType, digest,
//    size, then name when set).
//  - safetensors_config is the ConfigV2 text of Ollama's safetensors create: model_format
//    "safetensors", model_family, model_families, model_type, file_type, requires "0.19.0",
//    capabilities ["completion"], and architecture / os "" (it starts from an empty ConfigV2).
//  - TensorBlob gathers the entries of one tensor blob and writes it with the core safetensors
//    writer: entries and __metadata__ keys sorted by name (Go's json.Marshal order), data packed
//    in that order, the header space-padded to a multiple of 8.
//    - plain: the source values (demo_source_values of the name) as BF16, F16 or F32.
//    - quantized: T of `type` (int4, int8, nvfp4, mxfp4, mxfp8) with `group_size`, from the
//      source values of T: T as U32 [..., cols * bits / 32] (element j of a word in bits
//      [bits*j, bits*j + bits)), T.scale [..., cols / group_size], and for affine T.bias.
//      Affine: per group scale = (max - min) / (2^bits - 1) and bias = min, both rounded to
//      `affine_dtype` (BF16 or F16) first, then q = nearest((x - bias) / scale) clamped to the
//      code range, so the stored parameters are the ones the codes were fitted to. fp modes:
//      core mlx_quantize (mlx_quant.h), U8 scale bytes (E4M3 for nvfp4, E8M0 for mx). With
//      `global_scale` (nvfp4 only, as a prequantized ModelOpt import): g = amax / (448 x 6) of
//      the whole tensor, stored as-is in T.global_scale (F32 scalar), and the values divided by g
//      before quantizing, so w = e2m1[q] x e4m3(scale) x g.
//    - meta adds a __metadata__ string; tensor_keys adds "<T>.quant_type" and "<T>.group_size".
//      null_metadata writes "__metadata__":null first in the header (the oldest expert blobs)
//      and is for blobs without meta.
//    - write builds the blob from the core writer's header text (safetensors_header_text), names
//      the layer (its tensor or group name) and returns false with a message on stderr when the
//      core writer refuses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mlens/formats/safetensors_dtype.h"

namespace mlens::demo {

struct Layer {
    std::string media_type;
    std::string digest;
    uint64_t size = 0;
    std::string name;
};

inline constexpr const char* kTensorLayer = "application/vnd.ollama.image.tensor";
inline constexpr const char* kJsonLayer = "application/vnd.ollama.image.json";
inline constexpr const char* kTemplateLayer = "application/vnd.ollama.image.template";
inline constexpr const char* kSystemLayer = "application/vnd.ollama.image.system";
inline constexpr const char* kParamsLayer = "application/vnd.ollama.image.params";
inline constexpr const char* kLicenseLayer = "application/vnd.ollama.image.license";
inline constexpr const char* kModelLayer = "application/vnd.ollama.image.model";
inline constexpr const char* kConfigLayer = "application/vnd.docker.container.image.v1+json";

class StoreWriter {
public:
    explicit StoreWriter(std::filesystem::path root) : m_root(std::move(root)) {}
    const std::filesystem::path& root() const { return m_root; }

    bool blob(const std::string& media_type, const std::vector<uint8_t>& bytes, Layer& out, const std::string& name = {}) const;
    bool text(const std::string& media_type, const std::string& text, Layer& out, const std::string& name = {}) const;
    bool manifest(const std::string& model, const std::string& tag, const Layer& config, const std::vector<Layer>& layers) const;

private:
    std::filesystem::path m_root;
};

std::string safetensors_config(const std::string& family, const std::string& model_type, const std::string& file_type);

struct QuantSpec {
    std::string type;  // int4, int8, nvfp4, mxfp4, mxfp8
    uint64_t group_size = 0;
    SafetensorsDtype affine_dtype = SafetensorsDtype::bf16;
    bool global_scale = false;
};

class TensorBlob {
public:
    void plain(const std::string& name, SafetensorsDtype dtype, std::vector<uint64_t> shape);
    // False (with a message) when the shape does not fit the type's groups.
    bool quantized(const std::string& name, std::vector<uint64_t> shape, const QuantSpec& spec);
    void meta(const std::string& key, const std::string& value) { m_meta[key] = value; }
    void tensor_keys(const std::string& name, const std::string& type, uint64_t group_size);
    void null_metadata() { m_null_metadata = true; }
    bool write(const StoreWriter& store, const std::string& layer_name, Layer& out) const;

private:
    struct Entry {
        SafetensorsDtype dtype;
        std::vector<uint64_t> shape;
        std::vector<uint8_t> bytes;
    };
    void add(const std::string& name, SafetensorsDtype dtype, std::vector<uint64_t> shape, const void* data, uint64_t bytes);

    std::map<std::string, Entry> m_entries;
    std::map<std::string, std::string> m_meta;
    bool m_null_metadata = false;
};

}  // namespace mlens::demo
