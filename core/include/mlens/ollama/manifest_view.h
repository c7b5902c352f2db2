// What the store views show of one manifest: its layers with their blobs, the config blob's
// fields, and the text layers (ollama-store.md §3).
//
// Contract:
//  - read_model_config resolves the config blob (store.h rules), refuses one above
//    kMaxConfigBytes from its size (E_CONFIG_TOO_LARGE), and parses it (config_blob.h). Errors
//    inside the blob have an offset there and a field under the blob's path
//    ("blobs/sha256-<hex> config.file_type"); the others have the field "config", relative to
//    the manifest.
//  - view_manifest reads the manifest of `name`, resolves every layer's blob (never opening one
//    that failed the checks), parses the config and reads each text layer (template, system,
//    params, messages, license) up to text_bytes, raw: callers escape for display. A blob that
//    several layers name is read once, its TextBlob shared by them; all text read stays within
//    text_budget (kMaxViewTextBytes), a blob that would go past it is not read and its layers'
//    text_error is E_TOO_LARGE (src/ollama/text_layer_holder.h). No blob is
//    hashed here (verify with blob_hash.h). It fails only when the manifest is missing or
//    cannot be read; a broken manifest is returned with its diagnostics.
//  - model_format decides GGUF or safetensors: the config's model_format ("" is gguf), else
//    tensor layers mean safetensors and model layers gguf; "" when nothing tells.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/ollama/config_blob.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/text_blob.h"

namespace mlens {

struct LayerView {
    ManifestLayer layer;
    std::optional<BlobLookup> blob;  // unset when the digest failed the grammar
    std::shared_ptr<const TextBlob> text;  // text layers whose blob was readable (one shared by the layers naming it)
    std::optional<Error> text_error;
};

struct ManifestView {
    StoredManifest stored;
    LayerView config_layer;
    std::optional<ModelConfig> config;
    std::optional<Error> config_error;
    std::vector<LayerView> layers;
    std::string format;  // "gguf", "safetensors" or ""
};

Result<ModelConfig> read_model_config(const Store& store, const Manifest& manifest);
std::string model_format(const Manifest& manifest, const ModelConfig* config);

constexpr uint64_t kMaxViewTextBytes = 64ull << 20;  // max_view_text_bytes: 64 text layers read to kMaxTextBlobBytes

Result<ManifestView> view_manifest(const Store& store, const ModelName& name, uint64_t text_bytes = kMaxTextBlobBytes,
                                   uint64_t text_budget = kMaxViewTextBytes);

}  // namespace mlens
