// What a document opened from an Ollama store is: the store itself (its model list).
//
// Contract:
//  - Which paths are stores and store models is decided by resolve (mlens/open/target.h), as in
//    the command line tool; a store model opens as a Model through open_target and is addressed
//    by its manifest file, so recent files and drag and drop name it by that path.
//  - open_store_document lists a store resolve found, read-only (store_listing.h), from its
//    manifests, config blobs and the process's cache database only (cached_check): no blob is
//    read, so a store opened before shows every verdict the cache holds at once (whether each
//    model loads included), and a model whose blobs the cache does not know is "not yet
//    verified". Cancellable. The cache's warnings (rebuilt, working uncached) are kept in
//    cache_warnings, shown above the list.
//  - advance_digest_pass runs the whole check once per store document (every blob parsed and
//    hashed unless the cache knows it, the answers stored in the cache) and the loadability of
//    each model (opened only when the cache does not hold its verdict), as a job (progress and
//    cancel in the status bar) whose result is the complete listing, or E_CANCELLED; once it is
//    taken (on the main thread), the document's listing is replaced by it, so the list, the
//    navigator and the model page show the verified verdict. Panels call it every frame; it
//    never blocks.
#pragma once

#include <memory>
#include <string>

#include "job_runner.h"
#include "mlens/job.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_listing.h"

namespace mlens {

class Document;

struct DigestPass {
    bool started = false;
    JobHandle<StoreListing> job;  // set from the start until advance_digest_pass takes the report
    std::optional<Error> ended_by;  // the pass ended without a report (E_CANCELLED)
};

struct StoreDocument {
    Store store;
    StoreListing listing;
    std::vector<std::string> cache_warnings;
    // Shared by the copies a finished pass makes, so it runs once per opened store.
    std::shared_ptr<DigestPass> digests = std::make_shared<DigestPass>();
};

Result<StoreDocument> open_store_document(Store store, JobContext* job = nullptr);

void advance_digest_pass(Document& doc, JobRunner& jobs);
// Whether the pass runs (or has ended and its report is still to be taken).
bool digest_pass_running(const StoreDocument& store);
// "verifying blobs 40%", "digests verified", "verification cancelled; …", "" before it starts.
std::string digest_pass_text(const StoreDocument& store);

// "gemma3:4b (Ollama)"
std::string store_model_title(const ModelName& name);

}  // namespace mlens
