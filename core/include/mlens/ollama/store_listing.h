// The model list of a store, as `ollama list` would show it plus what ModelLens adds: format,
// family, parameter size and quantization from each config blob, and the state of blobs/.
//
// Contract:
//  - list_store scans the manifests (store.h), reads each (size cap, strict JSON) and its config
//    blob, and nothing else: no model blob is opened and nothing is hashed, so listing a large
//    store is fast. Models come sorted by full name.
//  - size: config + layer sizes as the manifest states them (checked sum; nullopt on overflow).
//    modified: the manifest file's mtime, which is what Ollama reports.
//  - A model whose manifest or config is broken is still listed, with its diagnostics (fields
//    under its manifest path, see located() in store.h) and ok() false.
//  - blob_files labels every entry of blobs/ (blob, partial download, temporary, legacy name,
//    other); `referenced` tells which blobs a listed manifest names.
//  - Cancellable between manifests (the listing is then partial, `cancelled` set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/ollama/store.h"

namespace mlens {

struct ModelListing {
    ManifestRef ref;
    std::optional<uint64_t> size;
    std::string format;               // "gguf", "safetensors", or "" when unknown
    std::string family;
    std::string parameter_size;       // config model_type, e.g. "8.0B"
    std::string quantization;         // config file_type, e.g. "Q4_K_M", "int4"
    std::vector<Diagnostic> diagnostics;
    bool ok() const;
};

struct ListedBlobFile {
    BlobFile file;
    bool referenced = false;
};

struct StoreListing {
    std::string root;
    std::vector<ModelListing> models;
    std::vector<Diagnostic> diagnostics;     // from the scan
    std::vector<ListedBlobFile> blob_files;
    bool cancelled = false;
};

StoreListing list_store(const Store& store, JobContext* job = nullptr);

}  // namespace mlens
