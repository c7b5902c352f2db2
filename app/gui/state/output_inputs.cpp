#include "output_inputs.h"

#include "mlens/model/model_inputs.h"
#include "mlens/open/reference_inputs.h"
#include "workspace.h"

namespace mlens {

namespace {

void add_document(OutputGuard& guard, const Document& doc) {
    add_reference_inputs(guard, doc.path);
    if (doc.model()) add_model_inputs(guard, *doc.model());
    if (doc.store()) guard.add_protected_folder(doc.store()->store.root());
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
