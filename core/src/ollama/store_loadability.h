// The loadability verdicts of a store's models (loadability.h), with their parameter counts,
// kept in the cache database (CacheKind::model_loadability), so that a store opened again knows
// whether each model loads, and how large it is, without opening it. Internal to core/ollama;
// store_listing.h states what a listing shows.
//
// Contract:
//  - An entry is keyed by the manifest file's stamp (StoredManifest::stamp) with the detail
//    "loads"; its value is the text of loadability_json's object with "parameters" added: the
//    elements of the model's logical tensors (summary.h), absent for a model without tensors.
//    The manifest names every blob by its sha256, so the manifest's stamp pins everything a
//    verdict reads as long as each blob holds the content its digest names. Hence:
//  - known() answers only for a model whose check found no error, knows every blob to hold what
//    its digest names (ModelCheck::digests_known: hashed by the digest pass, or the sha256 the
//    cache holds for the file as it is now) and knows every blob's header verdict
//    (unverified == 0), and whose manifest was read; otherwise, or without an entry, nullopt.
//  - assess() opens the model (open_store_model), judges it (assess_loadability) and counts its
//    parameters (summarize). The verdict is kept for finish() only when, before the open, every blob the manifest names had a stamp
//    whose cached sha256 is that blob's digest (a blob's stamp is taken once, before the first
//    open that names it, and serves every later one). finish() opens blobs/ again once and stores
//    each kept verdict whose manifest and blobs still have the stamps seen before: a stamp holds
//    the change time, so a file changed at any moment between its first stamp and finish() keys
//    nothing, and a cached verdict is always the one a fresh open gives. assess() gives nullopt
//    when the model does not open; without finish() nothing is stored.
//  - Entries are read once per device, in one query (cache_entries.h), and each distinct value is
//    decoded once (the models of a store share a few verdicts). Without a cache (null or
//    disabled) known() is always nullopt and assess() stores nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mlens/analysis/loadability.h"
#include "mlens/io/cache_entries.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_lookup.h"

namespace mlens {

// What a listing takes from a model it opens: whether llama.cpp loads it, and its parameters.
struct OpenedModelFacts {
    Loadability loads;
    std::optional<uint64_t> parameters;  // the elements of its logical tensors; nullopt with none
};

class StoreLoadability {
public:
    StoreLoadability(const Store& store, CacheDatabase* cache) : m_store(store), m_cache(cache) {}

    std::optional<OpenedModelFacts> known(const StoredManifest& manifest, const ModelCheck& check);
    std::optional<OpenedModelFacts> assess(const StoredManifest& manifest, const ModelCheck& check);
    void finish();

private:
    const CachedEntries& entries(CacheKind kind, uint64_t device);
    // The blob's place in m_named, its stamp and whether the cache vouches for it taken the first
    // time a model names it.
    uint32_t named_blob(const BlobDigest& digest);

    struct NamedBlob {
        BlobDigest digest;
        FileStamp before;  // zero when the blob was not found
        bool verified = false;  // found, and the cache's sha256 for that stamp is the digest
    };
    struct KeptVerdict {
        std::string manifest_path;  // relative to the root
        FileStamp manifest;
        std::vector<uint32_t> blobs;  // in m_named
        const std::string* value;  // the entry's text (see the contract), in m_kept_values
    };

    const Store& m_store;
    CacheDatabase* m_cache;
    std::optional<BlobDirectory> m_blobs;  // opened by the first assess(): one fstatat per blob
    std::vector<NamedBlob> m_named;
    std::unordered_map<std::string, uint32_t> m_named_index;  // by digest hex
    std::vector<KeptVerdict> m_kept;  // for finish()
    std::unordered_set<std::string> m_kept_values;  // each distinct verdict's text once (nodes never move)
    std::map<std::pair<CacheKind, uint64_t>, CachedEntries> m_entries;
    // Decoded values, keyed by their text in m_entries (which outlives it); nullopt: unreadable.
    std::unordered_map<std::string_view, std::optional<OpenedModelFacts>> m_decoded;
};

}  // namespace mlens
