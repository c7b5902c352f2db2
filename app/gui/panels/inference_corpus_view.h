// InferenceCorpusView (Inference › Corpus): corpus KLD (corpus_kld.h) of the A/B pair — this
// document's model (A) against the B chosen in the A/B view — over a text file, as
// `mlens kld A B --text FILE --ctx N --chunks K` computes it: the summary llama-perplexity prints
// (PPL of both, their log ratio, KLD mean ± error, median, p90, p99, p99.9, max, same top token,
// RMS Δp), the KLD per scored position over the whole text (chunk boundaries marked), the
// distribution of the KLD, and the tokens at a clicked position.
//
// Contract:
//  - Run starts one job on the controller (progress: the share of chunks done; Cancel stops it).
//  - Clicking a position of the plot (or select()) shows the tokens before it in its chunk, the
//    token that follows and A's and B's top tokens there, fetched once from the worker. "Compare
//    in A/B" hands that window's text to the A/B view (take_ab_prompt), which re-runs the pair on
//    it: the same position with a shorter context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "panels/inference_ab_view.h"
#include "panels/panel.h"
#include "state/inference_controller.h"
#include "widgets/file_chooser.h"
#include "widgets/histogram_plot.h"

namespace mlens {

class InferenceCorpusView {
public:
    InferenceCorpusView();
    void draw(PanelContext& ctx, InferenceController& c, InferenceAbView& ab);
    bool run(PanelContext& ctx, InferenceController& c, InferenceAbView& ab);

    std::string text_path;
    KldOptions options;

    // Selects scored position `index` (counted over every chunk) of the result shown.
    void select(InferenceController& c, size_t index);
    std::optional<size_t> selected() const { return m_selected; }
    // Pieces of the selected position's window: the tokens up to it, then the token that follows.
    const std::vector<TokenPiece>& window() const { return m_window; }
    const std::vector<HistogramSeries>& histogram() const { return m_series; }
    // "Compare in A/B": the text of the selected window's tokens up to the selected one becomes
    // the A/B prompt (take_ab_prompt returns it once).
    void compare_in_ab();
    // The text of the selected window once "Compare in A/B" was pressed (then cleared).
    std::optional<std::string> take_ab_prompt();

private:
    void summary(const KldOp::Outcome& k);
    void position_plot(InferenceController& c, const KldOp::Outcome& k, float height);
    void position_detail(PanelContext& ctx, const KldOp::Outcome& k);
    void rebuild(const KldOp::Outcome& k);

    uint64_t m_serial = 0;  // controller.published<KldOp>() the state below belongs to
    std::optional<size_t> m_selected;
    std::vector<TokenPiece> m_window;
    std::string m_top_a, m_top_b;
    std::optional<Error> m_window_error;
    std::optional<std::string> m_ab_prompt;
    std::vector<HistogramSeries> m_series;
    HistogramPlot m_plot;
    FileChooser m_chooser;  // "Choose…": the text file (tick "all files" in it for a .txt)
};

}  // namespace mlens
