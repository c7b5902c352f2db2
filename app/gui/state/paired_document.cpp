#include "paired_document.h"

#include <filesystem>

#include "mlens/analysis/requant_reference.h"
#include "workspace.h"

namespace mlens {

bool can_pair(const Document& d, const Document& self) {
    return d.id != self.id && d.ready() && d.is_model() && !d.model()->tensors.empty();
}

bool names_file(const Document& d, const std::string& wanted) {
    namespace fs = std::filesystem;
    const fs::path path(wanted);
    if (!path.has_parent_path()) return fs::path(d.path).filename() == path;
    std::error_code a, b;
    return fs::weakly_canonical(path, a) == fs::weakly_canonical(d.path, b) && !a && !b;
}

bool still_open(Workspace* workspace, uint64_t id, const std::shared_ptr<const Model>& model) {
    Document* d = workspace ? workspace->find(id) : nullptr;
    return d && d->ready() && d->model() == model;
}

uint64_t float_twin_document(const Workspace& workspace, const Document& mine, size_t tensor) {
    if (!mine.ready() || !mine.is_model()) return 0;
    for (const auto& d : workspace.documents())
        if (can_pair(*d, mine) && is_float_twin(*mine.model(), tensor, *d->model())) return d->id;
    return 0;
}

Document* PairedDocument::get(Workspace* workspace) const { return workspace ? workspace->find(m_id) : nullptr; }

void PairedDocument::refresh(Workspace* workspace, const Document& self) {
    Document* d = get(workspace);
    if (d && can_pair(*d, self)) return;
    m_id = 0;
    if (workspace)
        for (const auto& other : workspace->documents())
            if (can_pair(*other, self)) {
                m_id = other->id;
                return;
            }
}

bool PairedDocument::follow_link(Workspace* workspace, const Document& self) {
    if (!m_linked || !workspace) return false;
    for (const auto& d : workspace->documents())
        if (can_pair(*d, self) && names_file(*d, *m_linked)) {
            m_id = d->id;
            m_linked.reset();
            return true;
        }
    // The named file may still be opening; otherwise it is not open (or is this file).
    if (!workspace->opening()) m_linked.reset();
    return false;
}

}  // namespace mlens
