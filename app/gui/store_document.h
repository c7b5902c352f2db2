// What a document opened from an Ollama store is: the store itself (its model list), or one
// model of it addressed by its manifest file.
//
// Contract:
//  - is_store_root: a directory holding manifests/ and blobs/ directories.
//  - store_manifest_of: a path <root>/manifests/<host>/<namespace>/<model>/<tag> whose root is a
//    store and whose four parts form a valid ModelName; opening such a path opens that model
//    (open_store_model), so recent files, drag and drop and the command line address store
//    models by their manifest.
//  - open_store_document opens the store read-only and lists it (store_listing.h), cancellable.
#pragma once

#include <optional>
#include <string>

#include "mlens/job.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_listing.h"

namespace mlens {

struct StoreDocument {
    Store store;
    StoreListing listing;
};

struct StoreManifestPath {
    std::string root;
    ModelName name;
};

bool is_store_root(const std::string& path);
std::optional<StoreManifestPath> store_manifest_of(const std::string& path);
Result<StoreDocument> open_store_document(const std::string& path, JobContext* job = nullptr);

// "gemma3:4b (Ollama)"
std::string store_model_title(const ModelName& name);

}  // namespace mlens
