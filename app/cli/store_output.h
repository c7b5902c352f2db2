// Text and JSON output of `mlens store`: the model list of a store and one model's manifest.
#pragma once

#include <string>

#include "mlens/ollama/store.h"

namespace mlens::cli {

struct StoreShowOptions {
    bool json = false;
    bool verify = false;  // hash every blob and compare with its digest
    bool tensors = false;  // open the model and list its logical tensors and groups
    bool no_cache = false;  // neither read nor write the cache database
    bool cached = false;  // a listing from manifests, config blobs and the cache only (cached_check)
};

// Each returns the exit code: kExitOk, or kExitBroken when something is wrong.
int print_store_listing(const Store& store, const StoreShowOptions& options);
int print_store_manifest(const Store& store, const ModelName& name, const StoreShowOptions& options);

// `show ollama://...`: a registry's model as print_store_manifest shows a store's.
int print_registry_manifest(const std::string& reference, const StoreShowOptions& options);

// `verify ollama://...`: every blob of a registry model hashed (registry_verify_output.cpp).
int print_registry_verification(const std::string& reference, bool json);

// "2026-08-01 12:00 UTC".
std::string utc_time_text(int64_t seconds);

}  // namespace mlens::cli
