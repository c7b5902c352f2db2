#include "store_document.h"

#include "document.h"
#include "mlens/text/escape.h"

namespace mlens {

Result<StoreDocument> open_store_document(Store store, JobContext* job) {
    Partial<StoreListing> listing = list_store(store, kStructureCheck, job);
    if (!listing.complete()) return cancelled_error();
    return StoreDocument{std::move(store), std::move(listing.value)};
}

void advance_digest_pass(Document& doc, JobRunner& jobs) {
    if (!doc.store()) return;
    DigestPass& pass = *doc.store()->digests;
    if (!pass.started) {
        std::shared_ptr<const StoreDocument> store = doc.store();
        pass.started = true;
        pass.job = jobs.start("verify digests", [store](JobContext& jc) -> Result<StoreCheckReport> {
            Partial<StoreCheckReport> report = check_store(store->store, StoreCheckOptions{}, &jc);
            if (!report.complete()) return cancelled_error();
            return std::move(report.value);
        });
        return;
    }
    std::optional<Result<StoreCheckReport>> taken = pass.job.try_take();
    if (!taken) return;
    if (!*taken) {
        pass.ended_by = taken->error();
        return;
    }
    auto updated = std::make_shared<StoreDocument>(*doc.store());
    apply_check(updated->listing, taken->value());
    doc.content = StoreDocumentPtr(std::move(updated));
}

bool digest_pass_running(const StoreDocument& store) { return static_cast<bool>(store.digests->job); }

std::string digest_pass_text(const StoreDocument& store) {
    const DigestPass& pass = *store.digests;
    if (!pass.started) return {};
    if (pass.job) return "verifying digests " + std::to_string(static_cast<int>(pass.job.progress() * 100)) + "%";
    if (pass.ended_by) return "digest pass cancelled; verdicts without digests";
    return "digests verified";
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
