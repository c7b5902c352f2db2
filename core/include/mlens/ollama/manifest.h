// Ollama manifests: the JSON file at manifests/<host>/<namespace>/<model>/<tag> that lists a
// model's config blob and layers (ollama-store.md §3; malformed-inputs.md A3 "manifest").
//
// Contract:
//  - parse_manifest reads the text with parse_strict_json (UTF-8, no BOM, depth <= 128, duplicate
//    keys rejected). Any JSON-level problem is E_MANIFEST_JSON at its byte offset (the message
//    keeps the detail: duplicate key, depth limit, invalid UTF-8, ...). Texts above
//    kMaxManifestBytes are E_MANIFEST_TOO_LARGE without being parsed (callers check the file size
//    before reading).
//  - Schema: schemaVersion (integer, must be 2), mediaType (string, optional; another value than
//    the Docker v2 manifest type is a warning), config (a layer object), layers (array of layer
//    objects, at most kMaxLayers: the next element stops the parse with E_TOO_MANY_LAYERS at its
//    offset). A layer: mediaType, digest (strings) and size (non-negative integer) required;
//    from and name optional strings (null allowed). Wrong types and missing fields are
//    E_MANIFEST_SCHEMA naming the field ("layers[2].size"); parsing goes on after them, so every
//    such error is reported and a too-long layer list still wins. Unknown fields are skipped
//    with W_UNKNOWN_FIELD.
//  - Every digest (config and layers) is then checked with parse_blob_digest: E_BAD_DIGEST at the
//    digest's offset, before any path is built. Unknown layer media types are W_UNKNOWN_MEDIA_TYPE
//    (the layer is skipped by every later check), the deprecated embed type W_DEPRECATED_MEDIA_TYPE.
//  - Diagnostics have format "store", fields relative to the manifest ("layers[0].digest") and
//    offsets into the manifest text (+ `base`). The result always holds what parsed; `valid` is
//    false when any error was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/diagnostic.h"
#include "mlens/model/model.h"
#include "mlens/ollama/digest.h"

namespace mlens {

constexpr uint64_t kMaxManifestBytes = 4ull << 20;  // max_manifest_bytes
constexpr uint64_t kMaxLayers = 65536;  // max_layers

constexpr std::string_view kManifestMediaType = "application/vnd.docker.distribution.manifest.v2+json";
constexpr std::string_view kConfigMediaType = "application/vnd.docker.container.image.v1+json";

enum class LayerKind {
    config,
    model,
    adapter,
    projector,
    draft,
    tensor,
    json,
    template_text,
    system,
    params,
    messages,
    license,
    embed,
    unknown
};

LayerKind layer_kind(std::string_view media_type);
// Short label: "config", "model", "adapter", "projector", "draft", "tensor", "json", "template",
// "system", "params", "messages", "license", "embed", "unknown".
const char* layer_kind_name(LayerKind kind);
// GGUF blobs: model, adapter, projector, draft.
bool layer_is_gguf(LayerKind kind);
// Text blobs shown as text: template, system, params, messages, license.
bool layer_is_text(LayerKind kind);

struct ManifestLayer {
    std::string media_type;
    LayerKind kind = LayerKind::unknown;
    std::string digest;  // as written
    std::optional<BlobDigest> blob;  // set when the digest passed the grammar
    uint64_t size = 0;
    bool has_size = false;
    std::optional<std::string> from;
    std::optional<std::string> name;
    ByteRange range;  // the layer object in the manifest
    uint64_t digest_at = 0;  // offset of the digest value
    uint64_t size_at = 0;  // offset of the size value
    std::string field;  // "config" or "layers[i]"
};

struct Manifest {
    uint64_t schema_version = 0;
    std::string media_type;
    ManifestLayer config;
    bool has_config = false;
    std::vector<ManifestLayer> layers;
    std::vector<Diagnostic> diagnostics;
    bool valid = false;

    // Sum of the config and layer sizes; nullopt on overflow.
    std::optional<uint64_t> total_size() const;
};

Manifest parse_manifest(std::string_view text, uint64_t base = 0);

}  // namespace mlens
