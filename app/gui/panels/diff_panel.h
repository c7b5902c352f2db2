// DiffPanel (center, model documents): `mlens diff A B` between this tab and another open one.
// The user picks A, the other tab, in the toolbar (the first other model is picked at first);
// this document is B, as in the Model error panel, and A is the reference of the value
// comparison, as in `mlens diff A B --numeric`.
//
// Contract:
//  - What is shown is one ModelDiffRun (state/model_diff_run.h): the same diff_models call with
//    the same options as mlens diff, never a second computation. The name map that aligned the
//    tensors is named; then four tabs: Metadata (added +, removed -, changed ~, both sides' type
//    and value), Tensors (the changes, both names, type and shape as A→B in GGUF order ne, and
//    with values compared RMSE, NMSE and cosine, or why a pair was not compared), Recipe (both
//    bases, the retyped tensors grouped by kind and change with their layers, both llama-quantize
//    commands, copyable), and Per layer once values were compared.
//  - The structural diff (metadata, names, types, shapes, recipes: no tensor data) runs as a job
//    as soon as A is picked or changes. "Compare values" runs the numeric diff as a job with
//    progress and Cancel; the structural result stays shown meanwhile, and a cancelled run leaves
//    it in place; when it finishes the Tensors tab comes forward. Starting a run cancels the one
//    running.
//  - When A closes or is reopened the result is cleared and a running job cancelled.
//  - The filter box filters the Metadata rows by key and the Tensors rows by either name
//    (case-insensitive). A click on a tensor row selects B's tensor in this document.
//  - Links (--select): "diff:FILE" picks the open file FILE (a name or a path) as A once it is
//    ready; "diff-values:FILE" also compares the values.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "panels/panel.h"
#include "state/model_diff_run.h"
#include "state/paired_document.h"

namespace mlens {

class DiffPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;

    // What the toolbar does (tests).
    void set_other(uint64_t document_id) { m_other.pick(document_id); }
    uint64_t other() const { return m_other.id(); }
    void start(PanelContext& ctx, bool numeric);
    void cancel() { m_job.cancel(); }

    // For tests: the result shown and whether a job runs.
    const ModelDiffRun* result() const { return m_result.get(); }
    bool running() const { return static_cast<bool>(m_job); }

private:
    void poll();
    void follow_pair(PanelContext& ctx);
    void toolbar(PanelContext& ctx);
    void summary();
    void metadata_tab();
    void tensors_tab(PanelContext& ctx);
    void recipe_tab(PanelContext& ctx);
    void layers_tab();

    PairedDocument m_other;  // A
    bool m_linked_values = false;  // the pending link asked for values too
    uint64_t m_diffed = 0;  // the A of the last run started
    JobHandle<ModelDiffRun> m_job;
    std::optional<ModelDiffRun> m_running;  // what the running job compares
    std::shared_ptr<ModelDiffRun> m_result;
    std::string m_filter;
    bool m_show_tensors = false;  // a value comparison just finished: bring its tab forward
    std::string m_status;  // how the last job ended when it left no result
};

}  // namespace mlens
