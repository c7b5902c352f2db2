// What `mlens show` shows of a model of an Ollama registry, read where it lives: the manifest,
// the config blob and the text layers (template, system, params, messages, license), as the store
// views read them from a store (manifest_view.h).
//
// Contract:
//  - view_registry_model gives the ManifestView of a manifest the registry sent
//    (fetch_registry_manifest, registry_model.h): stored.ref.path is the manifest's URL as
//    shown (display_url), stored.ref.file_size its bytes, stored.digest their sha256, and
//    stored.ref.modified 0 (a registry does not date its manifests). No layer's blob is resolved
//    in a store (LayerView::blob unset). Each text layer's blob is fetched (open_remote: the
//    registry's token, the range cache) up to text_bytes (TextBlob: the rest counted, not read),
//    once per distinct digest: layers that name one blob share its TextBlob (and its fetch error).
//    The text held for all text layers together stays within text_budget (kMaxViewTextBytes,
//    manifest_view.h): a blob that would go past what is left (the smaller of its layer's size
//    and text_bytes) is not fetched, and its layers' text_error is E_TOO_LARGE; a blob larger
//    than its layer says is read only to what is left. The config blob
//    (not counted) whole when at most kMaxConfigBytes (E_CONFIG_TOO_LARGE above) and parsed
//    (config_blob.h). A blob that cannot be fetched is that layer's text_error or the
//    config_error, never the call's. A blob of another size than its layer says is
//    E_SIZE_MISMATCH: the text layer's text_error (its text still read), the config_error (the
//    config not parsed). After a blob fails with a transport error, the others are not asked for
//    (TransferBatch, http_client.h).
//  - Model and tensor blobs are not fetched here: open_registry_model reads them by range.
//  - view_findings are the view's config_error and each text layer's text_error as diagnostics
//    (format "store", error, the layer's field: "config" for a config error that names none), in
//    that order. A model opened from the same manifest gets them as a store model's open gets its
//    store check's findings about the layers it did not read (open_fetched_registry_model, target.h):
//    the open of a registry's model then gives the verdict `show` gives.
//  - view_transport_failure is the first of the view's errors that is the registry's or the
//    network's (is_transport_failure, http_client.h): after it, the model's blobs are not asked
//    for either, each of which would cost its own stall time and retries.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mlens/job.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/result.h"

namespace mlens {

ManifestView view_registry_model(const RegistryReference& reference, const RegistryManifest& registry, JobContext* job = nullptr,
                                 uint64_t text_bytes = kMaxTextBlobBytes, uint64_t text_budget = kMaxViewTextBytes);

std::vector<Diagnostic> view_findings(const ManifestView& view);

std::optional<Error> view_transport_failure(const ManifestView& view);

}  // namespace mlens
