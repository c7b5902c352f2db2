// WeightsPanel (center): the values of the selected tensor — statistics, a histogram (log scale,
// bin count, a range mode: auto, min-max, p0.1-p99.9 or symmetric around 0 (histogram_range.h;
// auto by default, so outlier channels do not squeeze the bulk into a few bins; the values
// outside are the plot's end bins), drag-to-zoom that re-bins the zoomed range as a custom
// range), and the first values laid out by rows;
// under the statistics, the distribution of its block scales (weights_scales_view.h); one expert
// of a stacked expert tensor; a comparison with the same-named tensor of another open document
// or with the tensor requantized as a chosen ggml type, "requantized as Q4_0" in the picker and
// legend (metrics, overlaid histograms, the error histogram); histogram export as CSV; under the
// histogram, tabs for the first values, for what-if requantization (weights_requant_view.h) and,
// when a link named one (a Health finding), for one row and block (weights_location_view.h).
// A splitter between the statistics column and the histogram, and one between the histogram and
// the tabs under it, resize them (kept while the panel lives).
//
// Contract: all decoding runs as one job on the JobRunner (weights_inspection.h) with progress and
// cancel; a new request cancels the running one. Statistics and block scales are computed again
// only when the tensor, the expert or the comparison changes, block scales also when the bin
// count does; a zoom re-bins the value histogram alone. PNG export captures the plot as drawn
// (capture.h) on the frame after the export window closed, so nothing covers it. CSV and PNG go
// through the core's SafeFileWriter, never over the files of an open document (output_inputs.h).
// The panel follows the document's tensor
// selection and keeps showing the last tensor when something else is selected. The
// requantization table follows the tensor and expert shown and clears when they change.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/analysis/weights_inspection.h"
#include "mlens/io/safe_file_writer.h"
#include "panels/panel.h"
#include "panels/panel_links.h"
#include "panels/weights_location_view.h"
#include "panels/weights_requant_view.h"
#include "panels/weights_scales_view.h"
#include "widgets/histogram_plot.h"

namespace mlens {

class WeightsPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    void draw_windows(PanelContext& ctx) override;

    // Settings the toolbar also changes (tests, other panels).
    // Compare with the same-named tensor of a document (0: compare with nothing) or with this
    // tensor requantized as a ggml type; each replaces the other.
    void compare_with(uint64_t document_id) {
        m_want.compare_doc = document_id;
        m_want.compare_type.reset();
    }
    void compare_with_requantized(uint32_t ggml_type) {
        m_want.compare_doc = 0;
        m_want.compare_type = ggml_type;
    }
    void set_bins(int bins) { m_bins_input = bins; }
    void set_range_mode(HistogramRangeMode mode) {
        m_want.range_mode = mode;
        m_want.range.reset();
        m_plot.set_view(std::nullopt);
    }
    void show_error_histogram(bool on) { m_error_view = on; }
    // Brings the Requantize tab forward on the next frame.
    void show_requant() { m_select_requant = true; }
    // "requant:TENSOR": selects that tensor and runs its Requantize tab.
    // "weights:TENSOR[@expert=E][#row=R,block=B]" (panel_links.h): selects that tensor, shows
    // expert E of a stacked tensor (ignored for one without it), and with a row opens the
    // "Row · block" tab (weights_location_view.h) at row R, block B.
    bool accept_link(std::string_view link, Document& doc) override;

    // For tests: the result shown, the comparison's label, and whether a job is running.
    const WeightsResult* result() const { return m_result.get(); }
    const std::string& compare_title() const { return m_compare_title; }
    const std::vector<std::string>& legend() const { return m_legend; }  // series labels drawn last
    bool running() const { return static_cast<bool>(m_job); }
    HistogramPlot& plot() { return m_plot; }
    BlockScalesView& scales_view() { return m_scales; }
    WeightsRequantView& requant_view() { return m_requant; }
    WeightsLocationView& location_view() { return m_location_view; }
    // The tensor and expert shown (or being decoded).
    size_t tensor_shown() const { return m_want.tensor; }
    std::optional<uint64_t> expert_shown() const { return m_want.expert; }

private:
    struct Request {
        size_t tensor = 0;
        std::optional<uint64_t> expert;
        uint64_t compare_doc = 0;
        std::optional<uint32_t> compare_type;  // requantized as this ggml type
        uint32_t bins = 128;
        std::optional<std::pair<double, double>> range;
        HistogramRangeMode range_mode = HistogramRangeMode::automatic;
        bool operator==(const Request&) const = default;
    };

    void poll();
    // Applies the "weights:" link taken last.
    void follow_link(const Model& m);
    void start(PanelContext& ctx, const Request& rq, bool want_stats, bool want_scales);
    void toolbar(PanelContext& ctx, const TensorInfo& t);
    void compare_picker(PanelContext& ctx);
    void range_mode_picker();
    void histogram_view(const Document& doc);
    void lower_tabs(PanelContext& ctx, const WeightsResult& r);
    void export_csv(const std::string& path, OutputGuard guard);
    // The PNG path next to the CSV path (".hist.csv" → ".hist.png").
    std::string png_path() const;

    Request m_want;
    std::optional<Request> m_applied;  // request of the shown (or running) result
    // The analysis, or E_CANCELLED; while it runs, m_running (the same object) streams its stage.
    JobHandle<std::shared_ptr<WeightsResult>> m_job;
    std::shared_ptr<WeightsResult> m_running;
    std::shared_ptr<WeightsResult> m_result;
    HistogramPlot m_plot;
    BlockScalesView m_scales;
    WeightsRequantView m_requant;
    std::optional<WeightsLink> m_linked;  // a "weights:" link to apply at the next draw
    std::optional<WeightsLink> m_location;  // the row (and block) the Row · block tab shows
    WeightsLocationView m_location_view;
    bool m_select_location = false;
    bool m_select_requant = false;
    bool m_linked_requant = false;  // a "requant:TENSOR" link runs the Requantize tab at the next draw
    bool m_run_requant = false;  // run the Requantize tab once it has been drawn (--select requant:TENSOR)
    bool m_error_view = false;
    int m_bins_input = 128;
    float m_stats_width = 0;  // the statistics column; 0 until first laid out, then the splitter's
    float m_plot_height = 0;  // the histogram above the lower tabs; likewise
    bool m_export_open = false;
    std::string m_export_path;
    std::string m_export_status;
    std::string m_png_pending;  // PNG path to capture after the next plot is drawn
    OutputGuard m_png_guard;  // the open documents' files when the PNG was asked for
    std::string m_compare_title;
    std::vector<std::string> m_legend;
};

}  // namespace mlens
