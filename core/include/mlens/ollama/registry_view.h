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
//    registry's token, the range cache) up to text_bytes (TextBlob: the rest counted, not read);
//    the config blob whole when at most kMaxConfigBytes (E_CONFIG_TOO_LARGE above) and parsed
//    (config_blob.h). A blob that cannot be fetched is that layer's text_error or the
//    config_error, never the call's. A blob of another size than its layer says is
//    E_SIZE_MISMATCH: the text layer's text_error (its text still read), the config_error (the
//    config not parsed). After a blob fails with a transport error, the others are not asked for
//    (TransferBatch, http_client.h).
//  - Model and tensor blobs are not fetched here: open_registry_model reads them by range.
#pragma once

#include <cstdint>

#include "mlens/job.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/result.h"

namespace mlens {

ManifestView view_registry_model(const RegistryReference& reference, const RegistryManifest& registry, JobContext* job = nullptr,
                                 uint64_t text_bytes = kMaxTextBlobBytes);

}  // namespace mlens
