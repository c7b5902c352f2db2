// ModelErrorPanel (center): the quantization error of this whole model against a reference model
// open in another tab. The user picks the reference (A) — this document is B, the candidate —
// and compares all tensors paired by name as one job with progress and cancel. The result is a
// summary (compared / failed / unpaired tensors, overall pooled RMSE, the worst tensor), a
// per-layer bar plot (pooled RMSE or worst NMSE) and a sortable per-tensor table.
//
// Contract:
//  - One job at a time; starting again cancels the running one. A cancelled run leaves the
//    previous result in place.
//  - Results belong to the pair of documents they were computed for: when the reference closes
//    (or is reopened) they are cleared and a running job is cancelled; when the picker names
//    another reference they stay, marked stale, until the next comparison.
//  - Clicking a table row, a layer bar or the worst-tensor button selects that tensor of this
//    document and brings the Weights panel forward (Document::select). Choosing the Weights
//    panel's comparison document stays with the user.
//  - The link "error:FILE" (accept_link; FILE a file name) picks the open document of that file name as the
//    reference and starts the comparison once it is ready.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "panels/model_error_layer_plot.h"
#include "panels/model_error_table.h"
#include "panels/panel.h"
#include "state/model_error_run.h"
#include "state/paired_document.h"

namespace mlens {

class ModelErrorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    // "error:FILE": compares with that open file (a name or a path) once it is ready.
    bool accept_link(std::string_view link, Document& doc) override;

    // What the toolbar does (tests, other panels).
    void set_reference(uint64_t document_id) { m_reference.pick(document_id); }
    uint64_t reference() const { return m_reference.id(); }
    void start(PanelContext& ctx);
    void cancel() { m_job.cancel(); }
    // Selects the tensor of row `row` (index into the result's tensors) and shows it.
    void show_row(Document& doc, size_t row) const;

    // For tests: the result shown, whether it was computed for another reference, the job.
    const ModelErrorRun* result() const { return m_result.get(); }
    bool stale() const { return m_result && m_result->reference_id != m_reference.id(); }
    bool running() const { return static_cast<bool>(m_job); }

private:
    void poll();
    void forget_closed(PanelContext& ctx);
    void follow_linked_reference(PanelContext& ctx);
    void toolbar(PanelContext& ctx);
    void reference_picker(PanelContext& ctx);
    void summary(Document& doc);

    PairedDocument m_reference;  // A; an "error:FILE" link names it until that file is open
    JobHandle<ModelErrorRun> m_job;
    std::optional<ModelErrorRun> m_running;  // what the running job measures (its two models)
    std::shared_ptr<ModelErrorRun> m_result;
    ModelErrorTable m_table;
    LayerMetric m_metric = LayerMetric::rmse;
    std::string m_status;  // how the last job ended when it left no result
};

}  // namespace mlens
