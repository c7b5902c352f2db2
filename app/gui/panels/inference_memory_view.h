// InferenceMemoryView (Inference › Memory): the memory plan (memory_plan.h) of this document's
// model for a context length, batch, micro-batch and KV-cache type — weights, KV cache and compute
// buffer estimated from the file, llama.cpp's own plan for them, and what llama.cpp allocates for
// the same settings, with the error of each term: a table (estimate | llama.cpp plan | llama.cpp
// allocated | error, as `mlens memory` prints it), a grouped bar chart, and llama.cpp's buffers by
// type.
//
// Contract: the estimate is computed on the main thread from the parsed file whenever the
// settings change (quick, no llama.cpp). The plan is dry_run_memory (dry_run.h), the result the
// CLI prints, run as a JobRunner job of its own (a dry-run worker: no weight is read, no loaded
// model needed) whenever the settings differ from the last plan's; a change cancels a running
// plan. Measure starts one job on the controller. The error of a term is (estimate − measured) /
// measured, shown only when the measure used the settings shown; plan and allocation show only
// for the settings shown.
#pragma once

#include <optional>
#include <string>

#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceMemoryView {
public:
    InferenceMemoryView();
    void draw(PanelContext& ctx, InferenceController& c);
    bool run(PanelContext& ctx, InferenceController& c);

    MemoryPlanOptions options;

    // The estimate for `options` (nullopt before the first draw).
    const std::optional<Result<MemoryEstimate>>& estimate() const { return m_estimate; }
    // llama.cpp's plan for `m_planned_for` (nullopt until the first plan finished).
    const std::optional<Result<MemoryMeasure>>& plan() const { return m_plan; }

private:
    void update_estimate(const Model& model, bool as_is);
    void update_plan(PanelContext& ctx, bool as_is);
    void terms_table(const MemoryEstimate* est, const MemoryMeasure* plan, const MemoryMeasure* measured);
    void bar_chart(const MemoryEstimate& est, const MemoryMeasure* measured, float height);

    std::optional<Result<MemoryEstimate>> m_estimate;
    MemoryPlanOptions m_estimated_for;
    bool m_estimated_as_is = false;
    MemoryPlanOptions m_measured_for;
    JobHandle<MemoryMeasure> m_plan_job;
    std::optional<Result<MemoryMeasure>> m_plan;
    MemoryPlanOptions m_planned_for;  // the settings of m_plan_job, then of m_plan
    std::string m_planned_path;
    bool m_planned_as_is = false;
    const Model* m_model = nullptr;
};

}  // namespace mlens
