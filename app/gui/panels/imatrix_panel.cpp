#include "panels/imatrix_panel.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

enum Column { kTensor, kColumns, kExperts, kCount, kMean, kMin, kMax, kZeroColumns, kInactive, kColumnCount };

std::string figure(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

double total_count(const ImatrixEntry& e) {
    if (e.counts.size() == 1) return e.counts[0] * static_cast<double>(e.experts);
    return std::accumulate(e.counts.begin(), e.counts.end(), 0.0);
}

double sort_value(const ImatrixEntry& e, const ImatrixEntrySummary& s, int column) {
    switch (column) {
        case kColumns:
            return static_cast<double>(e.columns);
        case kExperts:
            return static_cast<double>(e.experts);
        case kCount:
            return total_count(e);
        case kMean:
            return s.mean_importance;
        case kMin:
            return s.min_importance;
        case kMax:
            return s.max_importance;
        case kZeroColumns:
            return static_cast<double>(s.zero_columns);
        case kInactive:
            return static_cast<double>(s.inactive_experts);
        default:
            return 0;
    }
}

}  // namespace

std::string ImatrixPanel::badge(const Document& doc) const {
    return doc.imatrix() ? std::to_string(doc.imatrix()->entries.size()) : std::string();
}

void ImatrixPanel::start(PanelContext& ctx) {
    auto imatrix = ctx.doc.imatrix();
    m_job = ctx.jobs.start("summarize " + ctx.doc.title, [imatrix](JobContext& job) -> Result<ImatrixSummaries> {
        ImatrixSummaries out;
        for (size_t i = 0; i < imatrix->entries.size(); ++i) {
            Result<ImatrixEntrySummary> s = summarize_entry(*imatrix, imatrix->entries[i], 64);
            if (!s) {
                out.error = escape_for_display(imatrix->entries[i].name + ": " + s.error().to_string(), 400);
                return out;
            }
            out.entries.push_back(std::move(*s));
            job.report(static_cast<double>(i + 1) / static_cast<double>(imatrix->entries.size()));
            if (job.cancelled()) return out;
        }
        Result<ImatrixStatistics> statistics = imatrix_statistics(*imatrix, &job);
        if (!statistics) {
            out.error = escape_for_display(statistics.error().to_string(), 400);
            return out;
        }
        out.statistics = std::move(*statistics);
        return out;
    });
}

void ImatrixPanel::entries_table(const Imatrix& m) {
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_ScrollX | ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
    const float height = std::max(ImGui::GetTextLineHeightWithSpacing() * 6, ImGui::GetContentRegionAvail().y * 0.42f);
    if (!ImGui::BeginTable("imatrix_entries", kColumnCount, flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    const char* count_header = m.format == ImatrixFormat::gguf ? "tokens" : "calls";
    ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthStretch);
    for (const char* h : {"columns", "experts", count_header, "mean", "min", "max", "zero columns", "inactive experts"})
        ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const std::vector<ImatrixEntrySummary>& s = m_summaries->entries;
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && (specs->SpecsDirty || m_order.size() != s.size())) {
        m_order.resize(s.size());
        std::iota(m_order.begin(), m_order.end(), size_t{0});
        if (specs->SpecsCount > 0) {
            const int column = specs->Specs[0].ColumnIndex;
            const bool ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
            std::stable_sort(m_order.begin(), m_order.end(), [&](size_t a, size_t b) {
                if (column == kTensor) return ascending ? m.entries[a].name < m.entries[b].name : m.entries[b].name < m.entries[a].name;
                const double x = sort_value(m.entries[a], s[a], column), y = sort_value(m.entries[b], s[b], column);
                return ascending ? x < y : y < x;
            });
        }
        specs->SpecsDirty = false;
    }
    for (size_t i : m_order) {
        const ImatrixEntry& e = m.entries[i];
        const ImatrixEntrySummary& sum = s[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(i));
        const std::string name = escape_for_display(e.name, 200);
        if (ImGui::Selectable(name.c_str(), m_selected == i, ImGuiSelectableFlags_SpanAllColumns)) m_selected = i;
        if (m_scroll_to_selected && m_selected == i) {
            ImGui::SetScrollHereY(0.5f);
            m_scroll_to_selected = false;
        }
        ImGui::PopID();
        ImGui::TableNextColumn();
        ui::text(std::to_string(e.columns));
        ImGui::TableNextColumn();
        ui::text(std::to_string(e.experts));
        ImGui::TableNextColumn();
        ui::text(ui::with_separators(static_cast<uint64_t>(total_count(e))));
        for (double v : {sum.mean_importance, sum.min_importance, sum.max_importance}) {
            ImGui::TableNextColumn();
            ui::text(figure(v));
        }
        ImGui::TableNextColumn();
        if (sum.zero_columns)
            ui::text_colored(palette().warning, std::to_string(sum.zero_columns));
        else
            ui::text_dim("0");
        ImGui::TableNextColumn();
        if (sum.inactive_experts)
            ui::text_colored(palette().warning, std::to_string(sum.inactive_experts));
        else
            ui::text_dim(e.experts > 1 ? "0" : "-");
    }
    ImGui::EndTable();
}

void ImatrixPanel::entry_detail(const Imatrix& m, size_t entry) {
    const ImatrixEntry& e = m.entries[entry];
    const ImatrixEntrySummary& s = m_summaries->entries[entry];
    std::string line = escape_for_display(e.name, 200) + ": " + std::to_string(e.columns) + " columns";
    if (e.experts > 1)
        line += " \xC2\xB7 " + plural(e.experts, "expert") + ", " + std::to_string(s.inactive_experts) + " never activated";
    line += " \xC2\xB7 " + plural(s.zero_columns, "column") + " never activated";
    ui::text(line);
    const float plot_width = e.experts > 1 ? ImGui::GetContentRegionAvail().x * 0.62f : ImGui::GetContentRegionAvail().x;
    const float height = std::max(160.0f, ImGui::GetContentRegionAvail().y);
    ImGui::BeginGroup();
    if (s.log10_importance.counts.empty()) {
        ui::text_dim("no activated column with an importance above 0");
    } else {
        HistogramSeries series;
        series.label = "columns";
        series.lo = s.log10_importance.lo;
        series.hi = s.log10_importance.hi;
        series.counts = s.log10_importance.counts;
        m_plot.x_title = "log10 importance (mean squared activation per column)";
        m_plot.draw("imatrix_hist", {series}, ImVec2(plot_width, height));
    }
    ImGui::EndGroup();
    if (e.experts <= 1) return;
    ImGui::SameLine();
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("imatrix_experts", 4, flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("expert");
    ImGui::TableSetupColumn(m.format == ImatrixFormat::gguf ? "tokens" : "calls");
    ImGui::TableSetupColumn("sum");
    ImGui::TableSetupColumn("zero columns");
    ImGui::TableHeadersRow();
    for (size_t x = 0; x < s.experts.size(); ++x) {
        const ImatrixExpertSummary& ex = s.experts[x];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(std::to_string(x));
        ImGui::TableNextColumn();
        if (ex.count <= 0)
            ui::text_colored(palette().warning, "0");
        else
            ui::text(ui::with_separators(static_cast<uint64_t>(ex.count)));
        ImGui::TableNextColumn();
        ui::text(figure(ex.sum));
        ImGui::TableNextColumn();
        ui::text(std::to_string(ex.zero_columns));
    }
    ImGui::EndTable();
}

void ImatrixPanel::draw(PanelContext& ctx) {
    if (!ctx.doc.imatrix()) return;
    const Imatrix& m = *ctx.doc.imatrix();
    if (!m_job && !m_done) start(ctx);
    std::string head = std::string(imatrix_format_name(m.format)) + " importance matrix \xC2\xB7 " + plural(m.entries.size(), "entry", "entries");
    if (m.chunk_count) head += " \xC2\xB7 " + plural(*m.chunk_count, "chunk");
    if (m.chunk_size) head += " of " + plural(*m.chunk_size, "token");
    ui::text(head);
    for (const std::string& d : m.datasets) ui::text_dim("dataset " + escape_for_display(d, 300));
    if (m_job) {
        std::optional<Result<ImatrixSummaries>> taken = m_job.try_take();
        if (!taken) {
            ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(240, 0), "summarizing\xE2\x80\xA6");
            return;
        }
        if (*taken) {
            m_summaries = std::make_shared<ImatrixSummaries>(std::move(*taken).value());
        } else {  // the job itself failed (out of memory)
            m_summaries = std::make_shared<ImatrixSummaries>();
            m_summaries->error = escape_for_display(taken->error().to_string(), 400);
        }
        m_done = true;
    }
    if (!m_summaries->error.empty()) {
        ui::text_colored(palette().error, m_summaries->error);
        return;
    }
    if (m_summaries->entries.size() != m.entries.size() || m.entries.empty()) return;
    if (!ImGui::BeginTabBar("imatrix_views")) return;
    if (ImGui::BeginTabItem("Entries")) {
        entries_table(m);
        entry_detail(m, std::min(m_selected, m.entries.size() - 1));
        ImGui::EndTabItem();
    }
    const ImGuiTabItemFlags statistics_flags = m_open_statistics ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    m_open_statistics = false;
    if (ImGui::BeginTabItem("Statistics", nullptr, statistics_flags)) {
        m_statistics.draw(m_summaries->statistics);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

bool ImatrixPanel::accept_link(std::string_view link, Document& doc) {
    if (link == "imatrix:statistics") {
        m_open_statistics = true;
        return true;
    }
    if (link.starts_with("imatrix:")) link.remove_prefix(8);
    const auto& entries = doc.imatrix()->entries;
    for (size_t i = 0; i < entries.size(); ++i)
        if (entries[i].name == link) {
            m_selected = i;
            m_scroll_to_selected = true;
            return true;
        }
    return false;
}

}  // namespace mlens
