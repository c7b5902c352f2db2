#include "panels/weights_scales_view.h"

#include <algorithm>

#include <imgui.h>

#include "panels/weights_tables.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::string series_label(const SeriesSummary& s) {
    std::string label = s.name + " \xC2\xB7 per " + std::to_string(s.values_per_entry) + " values";
    if (s.stride > 1) label += " \xC2\xB7 one block in " + std::to_string(s.stride);
    return label;
}

}  // namespace

void BlockScalesView::draw(const BlockScalesSummary& scales) {
    ui::text_colored(palette().accent, "Block scales and rows");
    if (!scales.series.empty()) {
        ImGui::SameLine(0, 16);
        ImGui::Checkbox("log counts##scales", &m_plot.log_scale);
    }
    if (!scales.note.empty()) {
        ImGui::PushTextWrapPos(0);
        if (scales.failed)
            ui::text_colored(palette().error, scales.note);
        else
            ui::text_dim(scales.note);
        ImGui::PopTextWrapPos();
    }
    if (scales.series.empty()) {
        m_shown.clear();
        return;
    }

    auto selected = std::find_if(scales.series.begin(), scales.series.end(), [&](const SeriesSummary& s) { return s.name == m_selected; });
    const SeriesSummary& shown = selected != scales.series.end() ? *selected : scales.series.front();
    for (const SeriesSummary& s : scales.series) {
        if (ImGui::Selectable(series_label(s).c_str(), &s == &shown)) m_selected = s.name;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s entries, one per %llu values", ui::with_separators(s.stats.count).c_str(),
                              static_cast<unsigned long long>(s.values_per_entry));
    }
    ImGui::Spacing();

    const ValueRange range{shown.histogram.lo, shown.histogram.hi};
    if (shown.name != m_shown || range != m_shown_range) m_plot.set_view(std::nullopt);
    m_shown = shown.name;
    m_shown_range = range;

    weights_brief_stats_table("scale_stats", shown.stats);
    // One value (or none) makes a histogram of a single sliver; say it instead.
    if (shown.stats.finite == 0) return ui::text_dim("no finite entries to plot");
    if (shown.stats.min == shown.stats.max) return ui::text_dim("every finite entry is " + number_text(shown.stats.min));
    HistogramSeries series;
    series.label = shown.name;
    series.lo = shown.histogram.lo;
    series.hi = shown.histogram.hi;
    series.counts = shown.histogram.counts;
    series.total = shown.histogram.total();
    m_plot.x_title = shown.name + " value";
    float height = std::max(kMinHeight, ImGui::GetContentRegionAvail().y);
    m_plot.draw("##scales_histogram", {series}, ImVec2(0, height));
}

}  // namespace mlens
