// BlockScalesView: the "Block scales and rows" section of the Weights panel — the series of a
// quantized tensor's block scales (block_scales.h) and of its rows (row_series.h) as a list
// ("sub_scale · per 32 values", "row_rms · per 4096 values"), the selected
// series' count, zeros, min, max, mean and std, and its histogram (HistogramPlot: log scale,
// drag to zoom, hover tooltip).
//
// Contract: draws a BlockScalesSummary that analyze_weights made; it starts no work. The
// selected series is kept by name, so moving between tensors of one type stays on the same
// series; a name the new tensor lacks falls back to its first series. Zoom narrows the view of
// the series' bins (no re-binning) and is reset when the shown series or its range changes.
// The summary's note comes first (dim, or in the error colour when decoding failed). The
// histogram fills the height left in the region, but is never below kMinHeight; a series whose
// finite entries are all one value (or that has none) gets a line saying so instead.
#pragma once

#include <string>

#include "mlens/analysis/weights_inspection.h"
#include "widgets/histogram_plot.h"

namespace mlens {

class BlockScalesView {
public:
    static constexpr float kMinHeight = 120;

    void draw(const BlockScalesSummary& scales);

    // The series to show, by name; the tests and the draw loop use it.
    void select(const std::string& name) { m_selected = name; }
    // The series shown in the last frame ("" when there was none).
    const std::string& shown() const { return m_shown; }
    HistogramPlot& plot() { return m_plot; }

private:
    std::string m_selected;
    std::string m_shown;
    ValueRange m_shown_range;
    HistogramPlot m_plot;
};

}  // namespace mlens
