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
//  - Nothing is written, renamed or deleted. Cancellable: the report is then partial, stopped by
//    E_CANCELLED ("check cancelled", also among its store diagnostics); progress follows the
//    bytes hashed.
//  - Every model gets one verdict (ModelCheck): its error and warning counts, every finding about
//    it (`reasons`, the same diagnostics as in the report) and, per layer ("config", "layers[i]"),
//    the first error about that layer or its blob. The model list (store_listing.h), `mlens check`,
//    `mlens store`/`show` and the app's store views all take their verdict from here, so they
//    agree. check_store_model judges one manifest by the same passes; kStructureCheck is the
//    cheap pass (everything above but hashing), the default adds the digest pass.
//  - With a cache (cache_database.h), a blob's sha256 and what parsing it as a kind found are
//    looked up by the blob file's identity before anything is read, and stored once computed
//    (only when the file still has the identity it had when it was found). A cached answer
//    replaces the computation and nothing else: the report is the one a fresh check gives, byte
//    counts included. With cached_only nothing inside a blob is read: a blob the cache has no
//    header answer for leaves every model using it Verdict::unverified ("not yet verified"),
//    unless an error is known already; a missing digest leaves digests_verified false.
//  - Permission denied anywhere (a manifests directory, a manifest, blobs/, a blob) is an error
//    naming the path, never a skip.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/ollama/store.h"

namespace mlens {

class CacheDatabase;  // cache_database.h

constexpr uint64_t kMaxJsonBlobBytes = 64ull << 20;  // max_json_blob_bytes (params, HF JSON layers)

struct StoreCheckOptions {
    bool verify_digests = true;
    bool parse_blobs = true;
    // With parse_blobs: also parse GGUF model layers and tensor layers. Off for a caller that
    // reads those blobs itself (open_store_model) and wants the verdict on everything else.
    bool parse_weight_blobs = true;
    CacheDatabase* cache = nullptr;  // where blob answers are looked up and stored; null: nowhere
    bool cached_only = false;  // with a cache: read no blob content, take what the cache knows
};

// Manifests, blob presence, type, place, readability, size, and every blob parsed as its media
// type; no hashing.
constexpr StoreCheckOptions kStructureCheck{false, true, true};

// What a listing knows without reading any blob: manifests, blob files' metadata and what the
// cache holds (digests and header verdicts).
StoreCheckOptions cached_check(CacheDatabase& cache);
// Every pass, reading what `cache` (null: no cache) does not hold and storing it there.
StoreCheckOptions full_check(CacheDatabase* cache);

enum class Verdict { ok, warnings, errors, unverified };

struct ModelCheck {
    ModelName name;
    std::string manifest_path;
    size_t errors = 0;
    size_t warnings = 0;
    std::vector<Diagnostic> reasons;
    std::vector<std::string> reason_layers;  // per reason: its layer ("config", "layers[i]"), "" for the manifest
    std::map<std::string, Diagnostic> failed_layers;  // "config" / "layers[i]" -> its first error
    bool digests_verified = false;  // the digest pass ran (and was not cancelled)
    // Every blob the check resolved holds the content its digest names: by the digest pass
    // (digests_verified), or, in a pass without it but with a cache, by the sha256 the cache holds
    // for each blob file as it is now. Shown nowhere (a structure pass reports the same with or
    // without a cache); it lets a listing take the model's cached loadability verdict.
    bool digests_known = false;
    size_t unverified = 0;  // layers whose blob the cache had no header answer for (cached_only)

    Verdict verdict() const;
    const Diagnostic* first_error() const;
    // The first error's code and where it is, the manifest path left out and blob names cut to
    // 12 digits: "E_BLOB_MISSING layers[0]", "E_BAD_MAGIC blobs/sha256-71fde3856a29… magic"; ""
    // when there is no error. Escaped.
    std::string short_reason() const;
    // The same for any of its reasons.
    std::string place_text(const Diagnostic& d) const;
    // "ok", "2 warnings", "not yet verified", or the first error with its message:
    // "E_BLOB_MISSING layers[0]: …". Escaped.
    std::string reason_text() const;
};

struct StoreCheckReport {
    std::string root;
    std::vector<Diagnostic> diagnostics;
    std::vector<ModelCheck> models;
    uint64_t blobs_checked = 0;
    uint64_t bytes_hashed = 0;
    std::vector<Diagnostic> store_diagnostics;  // not about one model: the scan's, a cancellation
    bool digests_verified = false;
    bool manifests_complete = true;  // the scan took every entry under manifests/ (StoreScan::complete)
    size_t error_count() const;
    size_t warning_count() const { return diagnostics.size() - error_count(); }
};

Partial<StoreCheckReport> check_store(const Store& store, const StoreCheckOptions& options = {}, JobContext* job = nullptr);

// The verdict of one model (its manifest read by name), by the same passes as check_store.
ModelCheck check_store_model(const Store& store, const ModelName& name, const StoreCheckOptions& options = kStructureCheck,
                             JobContext* job = nullptr);

const char* verdict_name(Verdict v);  // "ok", "warnings", "rejected", "unverified"

// A tensor layer (or GGUF model layer) whose blob the check failed: what a tensor listing shows
// for the tensors it could not read, and how it marks those read from a damaged blob.
struct FailedTensorLayer {
    std::string name;  // the layer name (tensor or group name), or its field when unnamed
    std::string field;  // "layers[i]"
    std::string blob_hex;  // the digest's hex, when the digest was valid
    Diagnostic reason;  // the layer's first error
};
std::vector<FailedTensorLayer> failed_tensor_layers(const Manifest& manifest, const ModelCheck& check);
// The entry of `failed` whose blob is the file at `blob_path` (matched by the digest that ends a
// blob's file name), or null.
const FailedTensorLayer* failed_layer_of(const std::vector<FailedTensorLayer>& failed, const std::string& blob_path);

}  // namespace mlens
