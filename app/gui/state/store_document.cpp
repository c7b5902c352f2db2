#include "store_document.h"

#include "document.h"
#include "mlens/io/cache_database.h"
#include "mlens/text/escape.h"

namespace mlens {

Result<StoreDocument> open_store_document(Store store, JobContext* job) {
    const std::shared_ptr<CacheDatabase> cache = CacheDatabase::shared();
    Partial<StoreListing> listing = list_store(store, cached_check(*cache), job);
    if (!listing.complete()) return cancelled_error();
    return StoreDocument{std::move(store), std::move(listing.value), cache->take_warnings()};
}

void advance_digest_pass(Document& doc, JobRunner& jobs) {
    if (!doc.store()) return;
    DigestPass& pass = *doc.store()->digests;
    if (!pass.started) {
        std::shared_ptr<const StoreDocument> store = doc.store();
        pass.started = true;
        pass.job = jobs.start("verify blobs", [store](JobContext& jc) -> Result<StoreListing> {
            const std::shared_ptr<CacheDatabase> cache = CacheDatabase::shared();
            Partial<StoreListing> listing = list_store(store->store, full_check(cache.get()), &jc);
            if (!listing.complete()) return cancelled_error();
            return std::move(listing.value);
        });
        return;
    }
    std::optional<Result<StoreListing>> taken = pass.job.try_take();
    if (!taken) return;
    if (!*taken) {
        pass.ended_by = taken->error();
        return;
    }
    auto updated = std::make_shared<StoreDocument>(*doc.store());
    updated->listing = std::move(taken->value());
    doc.content = StoreDocumentPtr(std::move(updated));
}

bool digest_pass_running(const StoreDocument& store) { return static_cast<bool>(store.digests->job); }

std::string digest_pass_text(const StoreDocument& store) {
    const DigestPass& pass = *store.digests;
    if (!pass.started) return {};
    if (pass.job) return "verifying blobs " + std::to_string(static_cast<int>(pass.job.progress() * 100)) + "%";
    if (pass.ended_by) return "verification cancelled; verdicts as the cache knows them";
    return "digests verified";
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
