// ImatrixPanel (center): a llama-imatrix importance matrix as a document — what it was collected
// on (datasets, chunks), a sortable table of its entries (tensor, columns, experts, count, mean,
// least and greatest column importance, columns and experts never activated), and for the
// selected entry its experts (count, sum, columns never activated) and the histogram of log10 of
// its column importances; beside them, on a second tab, llama-imatrix's statistics
// (imatrix_statistics_table.h).
//
// Contract: the summaries (summarize_entry, imatrix.h) of every entry and the statistics
// (imatrix_statistics.h) are computed once, by one job with progress and cancel, when the panel is
// first drawn; the tables show them when it ends.
// The first entry is selected; a click, or the link "imatrix:ENTRY" (or the bare entry name, as
// --select gives it), selects another and scrolls to it; the link "imatrix:statistics" opens the
// statistics tab. Nothing is recomputed afterwards.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlens/quant/imatrix_statistics.h"
#include "panels/imatrix_statistics_table.h"
#include "panels/panel.h"
#include "widgets/histogram_plot.h"

namespace mlens {

struct ImatrixSummaries {
    std::vector<ImatrixEntrySummary> entries;  // one per Imatrix::entries, in order
    ImatrixStatistics statistics;
    std::string error;  // display-safe; when a summary failed
};

class ImatrixPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    std::string badge(const Document& doc) const override;

    // Tests: the summaries once computed, and the selected entry.
    const ImatrixSummaries* summaries() const { return m_done ? m_summaries.get() : nullptr; }
    size_t selected() const { return m_selected; }
    void select(size_t entry) { m_selected = entry; }
    bool accept_link(std::string_view link, Document& doc) override;

private:
    void start(PanelContext& ctx);
    void entries_table(const Imatrix& m);
    void entry_detail(const Imatrix& m, size_t entry);

    JobHandle<ImatrixSummaries> m_job;
    std::shared_ptr<ImatrixSummaries> m_summaries;
    bool m_done = false;
    size_t m_selected = 0;
    bool m_scroll_to_selected = false;  // a linked entry: scroll the table to it
    std::vector<size_t> m_order;  // entry indexes in display order
    HistogramPlot m_plot;
    ImatrixStatisticsTable m_statistics;
    bool m_open_statistics = false;  // select the statistics tab on the next frame
};

}  // namespace mlens
