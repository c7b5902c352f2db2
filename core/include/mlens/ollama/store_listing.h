// The model list of a store, as `ollama list` would show it plus what ModelLens adds: format,
// family, parameter size and quantization from each config blob, and the state of blobs/.
//
// Contract:
//  - list_store judges every model with check_store (store_check.h) — by default the structure
//    pass, which resolves, stats and parses every blob but hashes nothing; with kStructureCheck
//    replaced by the default options it also verifies digests — and reads each config blob for
//    family, parameter size and quantization. Each row carries its ModelCheck (verdict and
//    reasons), the same one `mlens check` gives. Models come sorted by full name.
//  - Each model the check does not reject is opened (headers only) for its loadability verdict
//    (loadability.h), the one `mlens loads` gives, and its parameter count (the elements of its
//    logical tensors, summary.h, as `mlens show` counts them), unless the cache holds them for the
//    model's manifest (store_loadability.h: only for a model whose blobs the check knows to hold
//    what their digests name, hashed or by the cache, and stored only when no file changed during
//    the open). With options.cached_only (cached_check) the listing reads manifests, config blobs
//    and blob metadata only: verdicts are what the cache knows ("not yet verified" where it knows
//    nothing) and `loads` and `parameters` are the cached ones, or unset.
//  - size: config + layer sizes as the manifest states them (checked sum; nullopt on overflow).
//    modified: the manifest file's mtime, which is what Ollama reports.
//  - A model whose manifest, config or blobs are broken is still listed, with what its config
//    says, and ok() false; its reasons name the files (fields under the manifest or blob path).
//  - blob_files labels every entry of blobs/ (blob, partial download, temporary, legacy name,
//    other); `referenced` tells which blobs a listed manifest names. references_known says
//    whether a blob no manifest names is unreferenced: only when every manifest was read and is
//    valid, no directory of manifests/ failed to read, the scan skipped no entry there (a
//    symlink, manifests/ itself a symlink, a FIFO or folder where a tag file belongs, an invalid
//    name: StoreScan::complete) and the listing was not stopped. Decided:
//    a manifest with any error (bad JSON, too large, unreadable, a bad digest) may have named a
//    blob ModelLens cannot see, so one such manifest makes every unnamed blob's state unknown,
//    never "unreferenced" (a word a user may take as "safe to delete").
//  - blob_summary() is the one count of blobs/ every view shows: blobs and their bytes, partial
//    downloads, temporary files, legacy names, other entries, and the unreferenced blobs
//    (nullopt unless references_known).
//  - Cancellable between manifests: the listing is then partial, stopped by E_CANCELLED.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/loadability.h"
#include "mlens/job.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_check.h"

namespace mlens {

struct ModelListing {
    ManifestRef ref;
    std::optional<uint64_t> size;
    std::string format;  // "gguf", "safetensors", or "" when unknown
    std::string family;
    std::string parameter_size;  // config model_type, e.g. "8.0B"
    std::optional<uint64_t> parameters;  // counted when opened (see the contract); unset when not known or none
    std::string quantization;  // config file_type, e.g. "Q4_K_M", "int4"
    ModelCheck check;  // the verdict and its reasons
    std::optional<Loadability> loads;  // whether llama.cpp loads it; unset when the check rejected it
    bool ok() const { return check.verdict() != Verdict::errors; }
};

struct ListedBlobFile {
    BlobFile file;
    bool referenced = false;
};

struct BlobFilesSummary {
    uint64_t blobs = 0, bytes = 0;  // entries named as blobs, and their sizes
    std::optional<uint64_t> unreferenced;  // blobs no manifest names; nullopt when that is unknown
    uint64_t partial = 0, temporary = 0, legacy = 0, other = 0;  // partial counts both partial kinds
};

struct StoreListing {
    std::string root;
    std::vector<ModelListing> models;
    std::vector<Diagnostic> diagnostics;  // not about one model: the scan's
    std::vector<ListedBlobFile> blob_files;
    bool references_known = false;  // see the contract: a blob `referenced` false is unreferenced
    bool digests_verified = false;
    size_t error_count() const;  // store-level errors plus models rejected
    BlobFilesSummary blob_summary() const;
};

Partial<StoreListing> list_store(const Store& store, const StoreCheckOptions& options = kStructureCheck, JobContext* job = nullptr);

}  // namespace mlens
