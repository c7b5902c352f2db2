// InferenceGenerateView (Inference › Generate): a prompt, max tokens, greedy or sampling
// (temperature, top-k, top-p, seed), Run and Stop. Generated tokens stream in as chips after the
// prompt's; below, one table row per step with the token, its probability and the model's top-5
// candidates (softmax at temperature 1, as generate.h defines them), and the prompt and
// generation speeds in tokens/s.
//
// Contract: Run starts one generation job on the controller; Stop cancels it and keeps the
// tokens streamed so far. The table follows the newest step while a generation runs.
#pragma once

#include <cstddef>
#include <string>

#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceGenerateView {
public:
    InferenceGenerateView();
    void draw(PanelContext& ctx, InferenceController& c);
    // Starts a generation with the current settings; false when the controller refused.
    bool run(PanelContext& ctx, InferenceController& c);

    std::string prompt = "Once upon a time";
    GenerateOptions options;
    bool sample = false;  // false: greedy
    float temperature = 0.8f;  // used when sampling

private:
    void settings(PanelContext& ctx, InferenceController& c);
    void status(const InferenceController& c);
    void steps_table(PanelContext& ctx, const InferenceController& c);

    size_t m_rows_seen = 0;
    int m_target = 0;  // max_tokens of the generation last started
};

}  // namespace mlens
