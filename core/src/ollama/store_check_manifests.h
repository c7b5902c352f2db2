// The store check that also hands out what it read: for the model list, which shows each
// manifest the check judged without reading it a second time.
//
// Contract: check_store_keeping_manifests is check_store (store_check.h) and fills `manifests`
// with one StoredManifest per model of the report, in the report's order (a manifest that could
// not be read is there with found false and its diagnostics; its own sha256, `digest`, is left
// empty, as nothing the check or the list shows uses it), and `blob_files` (when given) with
// blobs/ as Store::blob_files lists it, from the one listing the check made. On cancellation the
// report is partial and `manifests` holds those read so far.
#pragma once

#include <vector>

#include "mlens/ollama/store.h"
#include "mlens/ollama/store_check.h"

namespace mlens {

Partial<StoreCheckReport> check_store_keeping_manifests(const Store& store, const StoreCheckOptions& options, JobContext* job,
                                                        std::vector<StoredManifest>& manifests,
                                                        std::vector<BlobFile>* blob_files = nullptr);

}  // namespace mlens
