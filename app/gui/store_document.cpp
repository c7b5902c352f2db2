#include "store_document.h"

#include "document.h"
#include "mlens/text/escape.h"

namespace mlens {

Result<StoreDocument> open_store_document(Store store, JobContext* job) {
    StoreListing listing = list_store(store, kStructureCheck, job);
    if (listing.cancelled) return Error{ErrorCode::E_CANCELLED, "", std::nullopt, "cancelled"};
    return StoreDocument{std::move(store), std::move(listing)};
}

void advance_digest_pass(Document& doc, JobRunner& jobs) {
    if (!doc.store) return;
    DigestPass& pass = *doc.store->digests;
    if (!pass.job) {
        auto report = std::make_shared<StoreCheckReport>();
        std::shared_ptr<const StoreDocument> store = doc.store;
        pass.report = report;
        pass.job = jobs.start("verify digests", [store, report](JobContext& jc) -> Status {
            *report = check_store(store->store, StoreCheckOptions{}, &jc);
            return ok_status();
        }).job();
        return;
    }
    if (pass.applied || !pass.job->done() || pass.report->cancelled) return;
    auto updated = std::make_shared<StoreDocument>(*doc.store);
    apply_check(updated->listing, *pass.report);
    pass.applied = true;
    doc.store = std::move(updated);
}

std::string digest_pass_text(const StoreDocument& store) {
    const DigestPass& pass = *store.digests;
    if (!pass.job) return {};
    if (!pass.job->done()) return "verifying digests " + std::to_string(static_cast<int>(pass.job->progress() * 100)) + "%";
    if (pass.report->cancelled) return "digest pass cancelled; verdicts without digests";
    return "digests verified";
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
