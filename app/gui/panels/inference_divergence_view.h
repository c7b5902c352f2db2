// InferenceDivergenceView (Inference › Divergence): layer divergence (layer_divergence.h) of the
// A/B pair — this document's model (A) against the B chosen in the A/B view — on a prompt: per
// layer, the relative error and the cosine similarity of each captured node (attn_out, ffn_out,
// l_out), pooled over the prompt's positions, as two plots with one line per node and the layer
// where the l_out divergence jumps marked, and a table with the SQNR.
//
// Contract: Run starts one job on the controller, which loads B in the job and drops it afterwards.
#pragma once

#include <string>

#include "panels/inference_ab_view.h"
#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceDivergenceView {
public:
    void draw(PanelContext& ctx, InferenceController& c, InferenceAbView& ab);
    bool run(PanelContext& ctx, InferenceController& c, InferenceAbView& ab);

    std::string prompt = "The quick brown fox jumps over the lazy dog";

private:
    enum class Figure { rel_error, cosine };
    void layer_plot(const LayerDivergenceResult& r, Figure figure, ImVec2 size);
    void table(PanelContext& ctx, const LayerDivergenceResult& r);
};

}  // namespace mlens
