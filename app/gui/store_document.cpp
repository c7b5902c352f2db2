#include "store_document.h"

#include "mlens/text/escape.h"

namespace mlens {

Result<StoreDocument> open_store_document(Store store, JobContext* job) {
    StoreListing listing = list_store(store, job);
    if (listing.cancelled) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
    return StoreDocument{std::move(store), std::move(listing)};
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
