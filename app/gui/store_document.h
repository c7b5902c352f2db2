// What a document opened from an Ollama store is: the store itself (its model list).
//
// Contract:
//  - Which paths are stores and store models is decided by resolve (mlens/open/target.h), as in
//    the command line tool; a store model opens as a Model through open_target and is addressed
//    by its manifest file, so recent files and drag and drop name it by that path.
//  - open_store_document lists a store resolve found, read-only (store_listing.h), cancellable.
#pragma once

#include <string>

#include "mlens/job.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_listing.h"

namespace mlens {

struct StoreDocument {
    Store store;
    StoreListing listing;
};

Result<StoreDocument> open_store_document(Store store, JobContext* job = nullptr);

// "gemma3:4b (Ollama)"
std::string store_model_title(const ModelName& name);

}  // namespace mlens
