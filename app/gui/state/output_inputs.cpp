#include "output_inputs.h"

#include "mlens/model/model_inputs.h"
#include "workspace.h"

namespace mlens {

namespace {

void add_document(OutputGuard& guard, const Document& doc) {
    guard.add_input(doc.path);
    if (doc.model) add_model_inputs(guard, *doc.model);
    if (doc.store)
        for (const ListedBlobFile& blob : doc.store->listing.blob_files)
            guard.add_input(doc.store->store.root() + "/blobs/" + blob.file.name);
}

}  // namespace

OutputGuard gui_output_guard(const Document* doc, const Workspace* workspace) {
    OutputGuard guard;
    if (doc) add_document(guard, *doc);
    if (workspace)
        for (const auto& open : workspace->documents()) add_document(guard, *open);
    return guard;
}

}  // namespace mlens
