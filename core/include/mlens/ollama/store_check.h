// `mlens check DIR`: validation of a whole store (malformed-inputs.md A4, B3).
//
// Contract:
//  - Every manifest the scan finds (store.h) is read and validated (manifest.h: size cap, strict
//    JSON, schema, layer cap, digest grammar). For the config and every layer of a known media
//    type whose digest is valid, the blob is resolved without a blocking open (E_BLOB_MISSING,
//    E_SYMLINK_LOOP, E_NOT_REGULAR_FILE, E_OUTSIDE_ROOT, with its warnings), its real size is
//    compared with the layer's size (E_SIZE_MISMATCH), and, with verify_digests, its content is
//    hashed (blob_hash.h) and compared with the digest of each reference on its own
//    (E_DIGEST_MISMATCH for every reference of a corrupt blob; a blob referenced twice is read
//    once). With parse_blobs the content is parsed by what the layer says it is: GGUF layers
//    (model, adapter, projector, draft) with the GGUF reader, tensor layers with the safetensors
//    reader, the config as ConfigV2 (E_CONFIG_JSON, E_CONFIG_TOO_LARGE), params and HF JSON
//    layers as strict JSON objects (E_PARAMS_JSON, E_JSON_LAYER; above kMaxJsonBlobBytes a JSON
//    layer is W_NOT_CHECKED, a params blob E_PARAMS_JSON naming the cap). Template, system and
//    license blobs are text and never interpreted; messages blobs get W_TEXT_NOT_UTF8 if not UTF-8.
//  - Diagnostic fields start with the file their offset refers to, relative to the root: the
//    manifest ("manifests/registry.ollama.ai/library/evil/latest layers[0].digest") or, for
//    problems inside a blob, the blob ("blobs/sha256-<hex> tensors[0]", with the referencing
//    layer and model named in the message). Scan warnings name the entry.
//  - Nothing is written, renamed or deleted. Cancellable (E_CANCELLED, `cancelled` set); progress
//    follows the bytes hashed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/ollama/store.h"

namespace mlens {

constexpr uint64_t kMaxJsonBlobBytes = 64ull << 20;   // max_json_blob_bytes (params, HF JSON layers)

struct StoreCheckOptions {
    bool verify_digests = true;
    bool parse_blobs = true;
};

struct ModelCheck {
    ModelName name;
    std::string manifest_path;
    size_t errors = 0;
    size_t warnings = 0;
};

struct StoreCheckReport {
    std::string root;
    std::vector<Diagnostic> diagnostics;
    std::vector<ModelCheck> models;
    uint64_t blobs_checked = 0;
    uint64_t bytes_hashed = 0;
    bool cancelled = false;
    size_t error_count() const;
    size_t warning_count() const { return diagnostics.size() - error_count(); }
};

StoreCheckReport check_store(const Store& store, const StoreCheckOptions& options = {}, JobContext* job = nullptr);

}  // namespace mlens
