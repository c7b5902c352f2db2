#include "panels/inference_layers_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/quant/stats.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr uint32_t kHistogramBins = 64;

std::vector<std::string> split_names(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : text + ",") {
        if (ch == ',' || ch == ' ') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    return out;
}

}  // namespace

bool InferenceLayersView::run(PanelContext& ctx, InferenceController& c) {
    LayerCaptureOptions options;
    options.names = split_names(names);
    if (options.names.empty()) return false;
    return c.start<LayersOp>(ctx.jobs, {prompt, options});
}

void InferenceLayersView::select(const LayerCaptureResult& r, size_t row) {
    if (row >= r.activations.size()) return;
    m_selected = row;
    m_series.clear();
    m_plot.set_view(std::nullopt);
    const ActivationStats& a = r.activations[row];
    if (a.values.empty()) return;
    VectorSource source(a.values);
    auto h = compute_histogram(source, kHistogramBins, std::nullopt, nullptr, 1);
    if (!h) return;
    HistogramSeries s;
    s.label = escape_for_display(a.tensor, 80);
    s.lo = h->lo;
    s.hi = h->hi;
    s.counts = h->counts;
    m_series.push_back(std::move(s));
}

void InferenceLayersView::table(PanelContext& ctx, const LayerCaptureResult& r) {
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable;
    // Every column fits: the name column is sized to the longest name (at most 30% of the width),
    // layer and count to their text, and the five statistics share the rest equally.
    const float avail = ImGui::GetContentRegionAvail().x;
    ImGui::PushFont(ctx.fonts.mono());
    std::vector<std::string> tensor_names;
    for (const ActivationStats& a : r.activations) tensor_names.push_back(escape_for_display(a.tensor, 60));
    const float name_w = ui::fitted_width(tensor_names, "tensor", avail * 0.3f);
    const float layer_w = ui::fitted_width("other", "layer", avail);
    const float count_w = ui::fitted_width("999999", "count", avail);
    ImGui::PopFont();
    if (!ImGui::BeginTable("activations", 8, flags)) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthFixed, name_w);
    ImGui::TableSetupColumn("layer", ImGuiTableColumnFlags_WidthFixed, layer_w);
    ImGui::TableSetupColumn("count", ImGuiTableColumnFlags_WidthFixed, count_w);
    for (const char* header : {"L2", "min", "max", "mean", "std"}) ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    ImGui::PushFont(ctx.fonts.mono());
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(r.activations.size()));
    while (clipper.Step()) {
        for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
            const ActivationStats& a = r.activations[static_cast<size_t>(row)];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(row);
            bool selected = m_selected == static_cast<size_t>(row);
            if (ui::cell_selectable(escape_for_display(a.tensor, 60), selected, ImGuiSelectableFlags_SpanAllColumns, ui::Elide::start))
                select(r, static_cast<size_t>(row));
            ImGui::PopID();
            ImGui::TableNextColumn();
            ui::text(a.layer < 0 ? std::string("other") : std::to_string(a.layer));
            ImGui::TableNextColumn();
            ui::text(std::to_string(a.count));
            for (double v : {a.l2, a.min, a.max, a.mean, a.std}) {
                ImGui::TableNextColumn();
                ui::cell_text(ui::number_format("%.4g", v));
            }
        }
    }
    ImGui::PopFont();
    ImGui::EndTable();
}

void InferenceLayersView::norm_plot(const LayerCaptureResult& r, float height) {
    std::vector<std::string> bases;
    PlotRange range{1e300, -1e300, 0, 0};
    for (const ActivationStats& a : r.activations) {
        if (a.layer < 0) continue;
        if (std::find(bases.begin(), bases.end(), a.base) == bases.end()) bases.push_back(a.base);
        range.x_lo = std::min(range.x_lo, static_cast<double>(a.layer));
        range.x_hi = std::max(range.x_hi, static_cast<double>(a.layer));
        range.y_hi = std::max(range.y_hi, a.l2);
    }
    if (bases.empty()) {
        ui::text_dim("No per-layer activations were captured.");
        return;
    }
    // Half a layer of room on each side so the end points are not on the frame.
    range.x_lo -= 0.5;
    range.x_hi += 0.5;
    range.y_hi *= 1.1;
    // Legend above the plot as a wrapping row, so it never covers a line.
    const float line = ImGui::GetTextLineHeight();
    const float right = ImGui::GetContentRegionMax().x;
    for (size_t b = 0; b < bases.size(); ++b) {
        std::string label = escape_for_display(bases[b], 40);
        if (b > 0) {
            ImGui::SameLine(0, 14);
            if (ImGui::GetCursorPosX() + 22 + ImGui::CalcTextSize(label.c_str()).x > right) ImGui::NewLine();
        }
        ImGui::BeginGroup();
        ImGui::Dummy(ImVec2(18, line));
        ImVec2 a = ImGui::GetItemRectMin();
        ImGui::GetWindowDrawList()->AddLine(ImVec2(a.x, a.y + line / 2), ImVec2(a.x + 18, a.y + line / 2), plot_series_color(b), 3.0f);
        ImGui::SameLine(0, 4);
        ui::text(label);
        ImGui::EndGroup();
    }
    PlotFrame f = draw_plot_frame("##norms", ImVec2(0, height), range, "layer", "L2 norm (last token)", true);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 mouse = ImGui::GetIO().MousePos;
    bool hovered = ImGui::IsItemHovered() && f.contains(mouse);
    bool clicked = ImGui::IsItemClicked();
    std::optional<size_t> nearest;
    float nearest_d2 = 64.0f;
    dl->PushClipRect(f.min, f.max, true);
    for (size_t b = 0; b < bases.size(); ++b) {
        std::vector<ImVec2> points;
        for (size_t i = 0; i < r.activations.size(); ++i) {
            const ActivationStats& a = r.activations[i];
            if (a.layer < 0 || a.base != bases[b]) continue;
            ImVec2 p(f.x_of(a.layer), f.y_of(a.l2));
            points.push_back(p);
            float dx = p.x - mouse.x, dy = p.y - mouse.y;
            if (hovered && dx * dx + dy * dy < nearest_d2) {
                nearest_d2 = dx * dx + dy * dy;
                nearest = i;
            }
        }
        ImU32 color = plot_series_color(b);
        if (points.size() > 1) dl->AddPolyline(points.data(), static_cast<int>(points.size()), color, ImDrawFlags_None, 2.0f);
        for (const ImVec2& p : points) dl->AddCircleFilled(p, 3.5f, color);
    }
    if (m_selected && *m_selected < r.activations.size() && r.activations[*m_selected].layer >= 0) {
        const ActivationStats& a = r.activations[*m_selected];
        dl->AddCircle(ImVec2(f.x_of(a.layer), f.y_of(a.l2)), 7.0f, ImGui::GetColorU32(ImGuiCol_Text), 0, 2.0f);
    }
    dl->PopClipRect();
    if (nearest) {
        const ActivationStats& a = r.activations[*nearest];
        ImGui::SetTooltip("%s  L2 %.5g  (click for its histogram)", escape_for_display(a.tensor, 60).c_str(), a.l2);
        if (clicked) select(r, *nearest);
    }
}

void InferenceLayersView::draw(PanelContext& ctx, InferenceController& c) {
    if (!c.can_decode()) {
        ui::text_dim(c.loaded() ? "The model is loaded as vocabulary only: reload it with weights to capture layers."
                                : "Load the model to capture activations.");
        return;
    }
    // The button first, so it is never cut; the two fields share what is left of the line.
    ImGui::BeginDisabled(c.busy());
    if (ImGui::Button("Capture")) run(ctx, c);
    ImGui::EndDisabled();
    ImGui::SameLine();
    const ImGuiStyle& style = ImGui::GetStyle();
    const float labels = ImGui::CalcTextSize("prompt").x + ImGui::CalcTextSize("graph names").x + 2 * style.ItemInnerSpacing.x + style.ItemSpacing.x;
    const float fields = std::max(ImGui::GetContentRegionAvail().x - labels, 160.0f);
    ImGui::SetNextItemWidth(std::min(420.0f, fields * 0.55f));
    ImGui::InputText("prompt", &prompt);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::min(360.0f, fields * 0.45f));
    ImGui::InputText("graph names", &names);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("llama.cpp graph tensor base names, comma-separated (a node \"<name>-<layer>\" is captured)");

    if (const auto& e = error_of(c.latest<LayersOp>())) {
        ImGui::PushTextWrapPos(0);
        ui::job_error_text(*e, 600);
        ImGui::PopTextWrapPos();
    }
    const auto& result = outcome_of(c.latest<LayersOp>());
    if (!result) return;
    const LayerCaptureResult& r = *result;
    if (m_serial != c.published<LayersOp>()) {
        // A new capture starts with the last activation (the model's final layer output) shown.
        m_serial = c.published<LayersOp>();
        m_selected.reset();
        m_series.clear();
        if (!r.activations.empty()) select(r, r.activations.size() - 1);
    }
    std::string cost = std::to_string(r.tokens.size()) +
        " prompt tokens \xC2\xB7 activations of the last token \xC2\xB7 "
        "decode with capture " +
        ui::number_format("%.2f", r.capture_ms) + " ms, without " + ui::number_format("%.2f", r.plain_ms) + " ms";
    if (r.plain_ms > 0) cost += " (\xC3\x97" + ui::number_format("%.2f", r.capture_ms / r.plain_ms) + ")";
    ui::text(cost);

    // Table on top (all columns readable), the norm plot and the histogram side by side below.
    float avail_h = ImGui::GetContentRegionAvail().y;
    float rows_h = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(r.activations.size() + 2);
    ImGui::BeginChild("layer_table", ImVec2(0, std::clamp(rows_h, 80.0f, avail_h * 0.45f)), false);
    table(ctx, r);
    ImGui::EndChild();
    float plot_h = std::max(160.0f, ImGui::GetContentRegionAvail().y);
    float half = ImGui::GetContentRegionAvail().x * 0.5f;
    ImGui::BeginChild("layer_norms", ImVec2(half, plot_h), false);
    norm_plot(r, 0);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("layer_histogram", ImVec2(0, plot_h), false);
    if (m_selected && !m_series.empty()) {
        const ActivationStats& a = r.activations[*m_selected];
        ui::text(escape_for_display(a.tensor, 60));
        ImGui::SameLine();
        ui::text_dim(plural(a.count, "value"));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The last token's values; drag to zoom, double-click to reset");
        m_plot.x_title = "activation value";
        m_plot.draw("##activation_histogram", m_series, ImVec2(0, 0));
    } else {
        ui::text_dim("Click a row or a point for the histogram of its values.");
    }
    ImGui::EndChild();
}

}  // namespace mlens
