#include "panels/imatrix_statistics_table.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

enum Column { kLayer, kTensor, kSum, kMin, kMax, kMean, kStddev, kActive, kElements, kEntropy, kEntropyNorm, kZd, kCossim, kColumnCount };

constexpr const char* kHeaders[kColumnCount] = {
    "layer", "tensor", "\xCE\xA3(Act\xC2\xB2)", "min", "max", "\xCE\xBC", "\xCF\x83", "% active", "N", "entropy", "E (norm)",
    "ZD",    "CosSim"};

std::string printed(const char* format, double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

double value_of(const ImatrixTensorStatistics& t, int column) {
    const float values[kColumnCount] = {
        0, 0, t.sum, t.min, t.max, t.mean, t.stddev, t.active, static_cast<float>(t.elements), t.entropy, t.entropy_norm, t.zd, t.cossim};
    return values[column];
}

// Layers sort by number, with "-" (outside the blocks) last.
double layer_key(const ImatrixTensorStatistics& t) { return t.layer == "-" ? 1e18 : std::stod(t.layer); }

bool before(const ImatrixTensorStatistics& a, const ImatrixTensorStatistics& b, int column) {
    if (column == kLayer) return layer_key(a) < layer_key(b);
    if (column == kTensor) return a.tensor < b.tensor;
    return value_of(a, column) < value_of(b, column);
}

void layers_table(const ImatrixStatistics& s) {
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("imatrix_layer_statistics", 4, flags)) return;
    for (const char* h : {"layer", "\xCE\xBC\xCE\xA3(Act\xC2\xB2)", "\xCE\xBCZD",
                          "\xCE\xBC"
                          "CosSim"})
        ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const ImatrixLayerStatistics& l : s.layers) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(std::to_string(l.layer));
        ImGui::TableNextColumn();
        ui::text(printed("%.2f", l.mean_sum));
        ImGui::TableNextColumn();
        ui::text(printed("%.4f%%", 100.0f * l.zd));
        ImGui::TableNextColumn();
        ui::text(printed("%.4f", l.cossim));
    }
    ImGui::EndTable();
}

}  // namespace

void ImatrixStatisticsTable::draw(const ImatrixStatistics& s) {
    ui::text_dim("as llama-imatrix --show-statistics computes them; click a header to sort");
    for (const std::string& name : s.without_activations)
        ui::text_colored(palette().warning, escape_for_display(name, 200) + ": no activations (every count is 0)");
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_ScrollX | ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate | ImGuiTableFlags_Resizable |
        ImGuiTableFlags_SizingFixedFit;
    const float layers_height = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min<size_t>(s.layers.size() + 2, 10));
    const float height = std::max(ImGui::GetTextLineHeightWithSpacing() * 6, ImGui::GetContentRegionAvail().y - layers_height);
    if (ImGui::BeginTable("imatrix_statistics", kColumnCount, flags, ImVec2(0, height))) {
        ImGui::TableSetupScrollFreeze(2, 1);
        for (int c = 0; c < kColumnCount; ++c) ImGui::TableSetupColumn(kHeaders[c], c == kTensor ? ImGuiTableColumnFlags_WidthStretch : 0);
        ImGui::TableHeadersRow();
        if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && (specs->SpecsDirty || m_order.size() != s.tensors.size())) {
            m_order.resize(s.tensors.size());
            std::iota(m_order.begin(), m_order.end(), size_t{0});
            if (specs->SpecsCount > 0) {
                const int column = specs->Specs[0].ColumnIndex;
                const bool ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
                std::stable_sort(m_order.begin(), m_order.end(), [&](size_t a, size_t b) {
                    return ascending ? before(s.tensors[a], s.tensors[b], column) : before(s.tensors[b], s.tensors[a], column);
                });
            }
            specs->SpecsDirty = false;
        }
        for (size_t i : m_order) {
            const ImatrixTensorStatistics& t = s.tensors[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::text(escape_for_display(t.layer, 20));
            ImGui::TableNextColumn();
            ui::text(escape_for_display(t.kind, 120));
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(t.tensor, 400).c_str());
            const char* formats[] = {"%.2f", "%.4f", "%.4f", "%.2f", "%.2f"};
            const double values[] = {t.sum, t.min, t.max, t.mean, t.stddev};
            for (size_t v = 0; v < std::size(values); ++v) {
                ImGui::TableNextColumn();
                ui::text(printed(formats[v], values[v]));
            }
            ImGui::TableNextColumn();
            ui::text(printed("%.2f%%", 100.0f * t.active));
            ImGui::TableNextColumn();
            ui::text(std::to_string(t.elements));
            ImGui::TableNextColumn();
            ui::text(printed("%.4f", t.entropy));
            ImGui::TableNextColumn();
            ui::text(printed("%.2f%%", t.entropy_norm));
            ImGui::TableNextColumn();
            ui::text(printed("%.2f%%", 100.0f * t.zd));
            ImGui::TableNextColumn();
            ui::text(printed("%.4f", t.cossim));
        }
        ImGui::EndTable();
    }
    ui::text_colored(palette().accent, "Weighted averages per layer (" + std::to_string(s.layers.size()) + ")");
    layers_table(s);
}

}  // namespace mlens
