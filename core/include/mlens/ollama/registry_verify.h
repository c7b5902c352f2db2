// Verifying a model of an Ollama registry where it lives: every blob its manifest names read
// whole and hashed, as `mlens verify` does for a store model's blob files.
//
// Contract:
//  - verify_registry_model fetches the manifest (fetch_registry_manifest, registry_model.h; its
//    errors are the call's), then checks the config blob and each layer's blob in manifest order.
//    A manifest with no model or tensor layer is no model: E_NO_MODEL_LAYER, as at an open, and
//    no blob is fetched.
//  - Before any blob is read, the sizes of the blobs to fetch (each digest and size once, however
//    many layers name it; none for a digest that is not sha256) are added up and compared with
//    what the download budget has left (remote_source.h): more is E_DOWNLOAD_LIMIT naming both,
//    and nothing of the blobs is fetched.
//  - A blob is opened with open_remote (the registry's token) without the range cache: what the
//    registry serves now is hashed, never ranges kept from an earlier read, which the cache trusts
//    on the server's validator alone. It is hashed front to back (sha256_source, blob_hash.h). A
//    blob of another size or digest is removed from the range cache (RangeCache::forget), so that
//    later reads fetch it again. Its answer (BlobCheck::result):
//    ok when its size is the layer's and its sha256 the digest's; else E_SIZE_MISMATCH (the
//    layer's size and the blob's, not hashed), E_DIGEST_MISMATCH (expected and actual digests),
//    E_BAD_DIGEST for a layer whose digest failed the manifest's grammar (never fetched), or the
//    error of the open or of a read (E_NOT_FOUND, E_NETWORK, E_HTTP, E_REMOTE_CHANGED ...).
//    A blob that several layers name (one digest and size) is fetched and hashed once; each of
//    those layers gets its answer, an error on its own field ("layers[5].digest", not the first
//    layer's).
//    After a blob fails with a transport error (E_NETWORK, E_HTTP), the blobs after it are not
//    asked for: each is that error, "not fetched after an earlier blob failed".
//  - Progress: bytes hashed over the bytes to fetch, to the job; a cancel stops the transfer under
//    way and fails the call (E_CANCELLED).
//  - The words every view uses: RegistryBlobCheck::verdict() is "ok", "MISMATCH" or the error's
//    code; RegistryVerification::verdict_text() is "ok, 6 blobs match their digests (3.09 MB
//    hashed)" or "rejected, 1 of 6 blobs do not match their digests" (and ", N could not be
//    checked" for the other failures).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/result.h"

namespace mlens {

struct RegistryBlobCheck {
    std::string field;  // "config" or "layers[i]"
    std::string media_type;
    std::string digest;  // as the manifest writes it
    uint64_t size = 0;  // the layer's
    std::string actual;  // "sha256:<hex>" of the bytes read, when the blob was hashed whole
    Status result = ok_status();

    std::string verdict() const;
};

struct RegistryVerification {
    std::string repository;  // {base}/v2/NAMESPACE/MODEL
    std::string manifest_digest;  // "sha256:<hex>"
    std::vector<RegistryBlobCheck> blobs;  // config first, then the layers in manifest order
    uint64_t bytes_hashed = 0;  // each blob once, however many layers name it

    bool ok() const;
    // How many blobs failed with E_DIGEST_MISMATCH.
    size_t mismatched() const;
    std::string verdict_text() const;
};

Result<RegistryVerification> verify_registry_model(const RegistryReference& reference, JobContext* job = nullptr);

}  // namespace mlens
