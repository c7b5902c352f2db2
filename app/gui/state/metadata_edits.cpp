#include "metadata_edits.h"

#include <algorithm>

namespace mlens {

void MetadataEdits::step(EditList next) {
    m_undo.push_back(std::move(m_current));
    m_redo.clear();
    m_current = std::move(next);
    ++m_version;
}

void MetadataEdits::stage(Edit edit) {
    EditList next = m_current;
    auto same_key = std::find_if(next.edits.begin(), next.edits.end(), [&](const Edit& e) { return e.key == edit.key; });
    if (same_key != next.edits.end()) *same_key = std::move(edit);
    else next.edits.push_back(std::move(edit));
    step(std::move(next));
}

void MetadataEdits::unstage(size_t index) {
    if (index >= m_current.edits.size()) return;
    EditList next = m_current;
    next.edits.erase(next.edits.begin() + static_cast<std::ptrdiff_t>(index));
    step(std::move(next));
}

bool MetadataEdits::undo() {
    if (m_undo.empty()) return false;
    m_redo.push_back(std::move(m_current));
    m_current = std::move(m_undo.back());
    m_undo.pop_back();
    ++m_version;
    return true;
}

bool MetadataEdits::redo() {
    if (m_redo.empty()) return false;
    m_undo.push_back(std::move(m_current));
    m_current = std::move(m_redo.back());
    m_redo.pop_back();
    ++m_version;
    return true;
}

void MetadataEdits::saved() {
    m_current = {};
    m_undo.clear();
    m_redo.clear();
    ++m_version;
}

std::shared_ptr<const Result<EditPlan>> MetadataEdits::plan(const Model& model) {
    if (m_current.empty()) return nullptr;
    if (m_planned_version != m_version) {
        m_plan = std::make_shared<const Result<EditPlan>>(plan_edit(model, m_current));
        m_planned_version = m_version;
    }
    return m_plan;
}

}  // namespace mlens
