// InferenceLayersView (Inference › Layers): capture_layers on a prompt — the activations of the
// last prompt token at each captured graph node: a table (tensor, layer, count, L2, min, max,
// mean, std), a plot of the L2 norm per layer with one line per base name, the cost of capturing
// (decode with the callback vs without), and the histogram of the values of the clicked row.
//
// Contract: Capture starts one job on the controller. A new capture selects its last activation;
// clicking a table row or a point of the plot selects another; its histogram (64 bins over its range) is computed on the main
// thread from the values the capture kept (one token's slice: small).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "panels/panel.h"
#include "state/inference_controller.h"
#include "widgets/histogram_plot.h"

namespace mlens {

class InferenceLayersView {
public:
    void draw(PanelContext& ctx, InferenceController& c);
    bool run(PanelContext& ctx, InferenceController& c);

    std::string prompt = "The quick brown fox jumps over the lazy dog";
    std::string names = "attn_norm,attn_out,ffn_inp,ffn_out,l_out";

    // Selects activation `row` of the capture shown (tests, clicks).
    void select(const LayerCaptureResult& r, size_t row);
    std::optional<size_t> selected() const { return m_selected; }
    const std::vector<HistogramSeries>& histogram() const { return m_series; }

private:
    void table(PanelContext& ctx, const LayerCaptureResult& r);
    void norm_plot(const LayerCaptureResult& r, float height);

    std::optional<size_t> m_selected;
    uint64_t m_serial = 0;  // controller.published<LayersOp>() the selection belongs to
    std::vector<HistogramSeries> m_series;
    HistogramPlot m_plot;
};

}  // namespace mlens
