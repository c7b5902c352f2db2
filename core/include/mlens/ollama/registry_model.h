// A model of an Ollama registry, opened where it lives: ollama://[REGISTRY/][NAMESPACE/]MODEL[:TAG]
// read through the registry's HTTP API (the Docker registry v2 protocol Ollama speaks), the
// blobs by range like any remote file (remote/remote_source.h).
//
// Contract:
//  - parse_registry_reference reads the text after "ollama://" with parse_model_reference
//    (model_name.h: host, namespace "library" and tag "latest" by default). The registry's base
//    URL: https://HOST for a host written in the reference; for the default host, OLLAMA_REGISTRY
//    when set (a base URL with its scheme, "http://127.0.0.1:5000", or a bare host, which gets
//    https://), else https://registry.ollama.ai. Errors: E_BAD_NAME (the reference), E_ARGS (the
//    registry URL).
//  - fetch_registry_manifest GETs {base}/v2/NAMESPACE/MODEL/manifests/TAG with Accept
//    application/vnd.docker.distribution.manifest.v2+json (at most kMaxManifestBytes). A 401 with
//    "WWW-Authenticate: Bearer realm=...,service=...,scope=..." is answered once: the realm is
//    asked (GET realm?service=...&scope=..., without any credential, at most 64 KiB of JSON) for
//    its "token" (or "access_token"; E_HTTP when it holds anything but visible ASCII, which would
//    make header lines of its own), and the manifest asked again with "Authorization: Bearer
//    TOKEN". The token goes with requests to the registry's origin only (http_client.h): the
//    blobs' redirects to a CDN go without it.
//  - The manifest is parsed (manifest.h: its errors fail the fetch, named after the reference);
//    RegistryManifest keeps it with the sha256 of its bytes and the options its blobs are fetched
//    with (remote_options_for the registry, and its token when it asked for one).
//  - open_registry_model fetches the manifest, then the model opens as a store model does
//    (open_manifest_model, store_model.h): each blob is {base}/v2/NAMESPACE/MODEL/blobs/sha256:HEX,
//    opened with open_remote (its first bytes fetched, the rest by range, the cache of
//    range_cache.h), its size checked against the layer's (E_SIZE_MISMATCH). Nothing is hashed: a
//    blob read by ranges is never whole (registry_verify.h reads and hashes every blob).
//  - Blob files are named by their URL as shown (display_url) in the Model. The Model holds at
//    most kOpenRegistryBlobs of its blobs' remote sources at once, those read last; another is
//    opened again when it is read (src/ollama/registry_blob_pool.h), so that a model of many
//    tensor blobs does not hold every blob's first fetch.
#pragma once

#include <string>
#include <string_view>

#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/ollama/manifest.h"
#include "mlens/ollama/model_name.h"
#include "mlens/remote/remote_source.h"

namespace mlens {

constexpr size_t kOpenRegistryBlobs = 8;  // remote sources a registry's Model holds at once

struct RegistryReference {
    std::string base;  // "https://registry.ollama.ai"
    ModelName name;
};

// `text` without the "ollama://" scheme.
Result<RegistryReference> parse_registry_reference(std::string_view text);

// The registry's manifest of a model and how its blobs are fetched.
struct RegistryManifest {
    Manifest manifest;
    std::string digest;  // "sha256:<hex>" of the manifest's bytes as the registry sent them
    uint64_t manifest_bytes = 0;  // the manifest's length as sent
    std::string repository;  // {base}/v2/NAMESPACE/MODEL
    RemoteOptions blob_options;

    std::string manifest_url(const std::string& tag) const { return repository + "/manifests/" + tag; }
    std::string blob_url(const BlobDigest& blob) const { return repository + "/blobs/" + blob.text(); }
};

Result<RegistryManifest> fetch_registry_manifest(const RegistryReference& reference, JobContext* job = nullptr);

Result<Model> open_registry_model(const RegistryReference& reference, JobContext* job = nullptr);
// The same with the manifest already fetched.
Result<Model> open_registry_model(const RegistryReference& reference, const RegistryManifest& registry, JobContext* job = nullptr);

}  // namespace mlens
