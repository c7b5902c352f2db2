// PairedDocument: the other open document that a two-document view (Model error, Diff) compares
// this one with — which one the user picked, and what a link named.
//
// Contract:
//  - can_pair(d, self): `d` is another document, ready, a model with tensors.
//  - names_file(d, wanted): `wanted` names the document's file: its file name as the tab shows
//    it, or a path to it.
//  - still_open(workspace, id, model): the document `id` is open, ready, and still holds `model`
//    (it was not closed or reopened since a result was computed from it).
//  - float_twin_document(workspace, mine, tensor): the id of the first open, ready model document
//    other than `mine` that holds a float twin of tensor `tensor` of `mine` (is_float_twin,
//    requant_reference.h: same name and shape, a more precise float type); 0 when there is none.
//    The Requantize table measures against it when no document is chosen to compare with.
//  - PairedDocument::refresh keeps the pick while it can pair, else picks the first document that
//    can (0 when none). link(name) remembers a file named by a link; follow_link picks that file
//    once it is open and ready and returns true then (once); the name is dropped when no open is
//    pending and nothing matches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "document.h"
#include "mlens/model/model.h"

namespace mlens {

class Workspace;

bool can_pair(const Document& d, const Document& self);
bool names_file(const Document& d, const std::string& wanted);
bool still_open(Workspace* workspace, uint64_t id, const std::shared_ptr<const Model>& model);
uint64_t float_twin_document(const Workspace& workspace, const Document& mine, size_t tensor);

class PairedDocument {
public:
    uint64_t id() const { return m_id; }
    void pick(uint64_t id) { m_id = id; }
    // The picked document, or null.
    Document* get(Workspace* workspace) const;
    void refresh(Workspace* workspace, const Document& self);
    void link(std::string file_name) { m_linked = std::move(file_name); }
    bool follow_link(Workspace* workspace, const Document& self);

private:
    uint64_t m_id = 0;
    std::optional<std::string> m_linked;
};

}  // namespace mlens
