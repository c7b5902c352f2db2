// InferenceMemoryView (Inference › Memory): the memory plan (memory_plan.h) of this document's
// model for a context length, batch, micro-batch and KV-cache type — weights, KV cache and compute
// buffer estimated from the file, beside what llama.cpp allocates for the same settings, with the
// error of each term: a table, a grouped bar chart, and llama.cpp's buffers by type.
//
// Contract: the estimate is computed on the main thread from the parsed file whenever the
// settings change (quick, no llama.cpp); Measure starts one job on the controller. The error of a
// term is (estimate − measured) / measured, shown only when the measure used the settings shown.
#pragma once

#include <optional>

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

private:
    void update_estimate(const Model& model);
    void terms_table(const MemoryEstimate* est, const MemoryMeasure* measured);
    void bar_chart(const MemoryEstimate& est, const MemoryMeasure* measured, float height);

    std::optional<Result<MemoryEstimate>> m_estimate;
    MemoryPlanOptions m_estimated_for;
    MemoryPlanOptions m_measured_for;
    const Model* m_model = nullptr;
};

}  // namespace mlens
