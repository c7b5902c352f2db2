// MetadataEdits: the metadata edits staged on one document, with undo and redo, and their plan
// against the document's model (edit/edit_plan.h). No ImGui.
//
// Contract:
//  - stage(edit) adds an edit; an edit already staged for the same key (as its key) is replaced,
//    so editing a value twice keeps the last value. unstage(i) drops the i-th staged edit.
//    Each of these is one step of the history: undo() goes back one step, redo() forward again;
//    a new step after an undo drops the steps that were undone.
//  - dirty(): some edit is staged (the tab shows it, closing asks).
//  - plan(model) is plan_edit of the staged edits, computed again only after a change; an edit the
//    planner refuses shows as the plan's error (its E_* code and reason).
//  - saved() clears the staged edits and the history once they were written to a new file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "mlens/edit/edit_plan.h"

namespace mlens {

class MetadataEdits {
public:
    void stage(Edit edit);
    void unstage(size_t index);
    bool undo();
    bool redo();
    void saved();

    bool can_undo() const { return !m_undo.empty(); }
    bool can_redo() const { return !m_redo.empty(); }
    bool dirty() const { return !m_current.empty(); }
    const EditList& edits() const { return m_current; }
    // The plan of the staged edits, shared so a save job can keep it; null while nothing is staged.
    std::shared_ptr<const Result<EditPlan>> plan(const Model& model);

private:
    void step(EditList next);

    EditList m_current;
    std::vector<EditList> m_undo;
    std::vector<EditList> m_redo;
    uint64_t m_version = 0;
    uint64_t m_planned_version = UINT64_MAX;
    std::shared_ptr<const Result<EditPlan>> m_plan;
};

}  // namespace mlens
