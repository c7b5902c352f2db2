#include "panels/inference_divergence_view.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/text/number_format.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::vector<std::string> bases_of(const LayerDivergenceResult& r) {
    std::vector<std::string> bases;
    for (const LayerDivergenceRow& row : r.rows)
        if (row.layer >= 0 && std::find(bases.begin(), bases.end(), row.base) == bases.end()) bases.push_back(row.base);
    return bases;
}

std::string sqnr_text(double db) { return std::isinf(db) ? std::string("\xE2\x88\x9E (equal)") : significant(db, 4); }

}  // namespace

bool InferenceDivergenceView::run(PanelContext& ctx, InferenceController& c, InferenceAbView& ab) {
    Document* b = ab.chosen_b(ctx);
    if (!b || prompt.empty()) return false;
    return c.start<DivergenceOp>(ctx.jobs, {b->path, prompt, LayerDivergenceOptions{}});
}

void InferenceDivergenceView::layer_plot(const LayerDivergenceResult& r, Figure figure, ImVec2 size) {
    const std::vector<std::string> bases = bases_of(r);
    auto value = [figure](const LayerDivergenceRow& row) { return figure == Figure::rel_error ? row.rel_error : row.cosine; };
    PlotRange range{1e300, -1e300, 1e300, -1e300};
    for (const LayerDivergenceRow& row : r.rows) {
        if (row.layer < 0) continue;
        range.x_lo = std::min(range.x_lo, static_cast<double>(row.layer));
        range.x_hi = std::max(range.x_hi, static_cast<double>(row.layer));
        range.y_lo = std::min(range.y_lo, value(row));
        range.y_hi = std::max(range.y_hi, value(row));
    }
    if (bases.empty()) {
        ui::text_dim("No per-layer node was captured in both models.");
        return;
    }
    range.x_lo -= 0.5;
    range.x_hi += 0.5;
    if (figure == Figure::rel_error) {
        range.y_lo = 0;
        range.y_hi = range.y_hi > 0 ? range.y_hi * 1.15 : 1.0;
    } else {
        // Cosine near 1: show the band the values occupy, with 1 at the top.
        const double spread = std::max(1.0 - range.y_lo, 1e-6);
        range.y_lo = 1.0 - spread * 1.15;
        range.y_hi = 1.0 + spread * 0.05;
    }
    ImGui::BeginGroup();
    const float line = ImGui::GetTextLineHeight();
    for (size_t b = 0; b < bases.size(); ++b) {
        if (b > 0) ImGui::SameLine(0, 14);
        ImGui::Dummy(ImVec2(18, line));
        ImVec2 a = ImGui::GetItemRectMin();
        ImGui::GetWindowDrawList()->AddLine(ImVec2(a.x, a.y + line / 2), ImVec2(a.x + 18, a.y + line / 2), plot_series_color(b), 3.0f);
        ImGui::SameLine(0, 4);
        ui::text(escape_for_display(bases[b], 40));
    }
    const bool rel = figure == Figure::rel_error;
    PlotFrame f = draw_plot_frame(rel ? "##rel_error" : "##cosine", size, range, "layer",
                                  rel ? "relative error |a\xE2\x88\x92"
                                        "b|/|a| (pooled over positions)"
                                      : "cosine similarity of a and b (pooled)",
                                  true);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool hovered = ImGui::IsItemHovered() && f.contains(mouse);
    const LayerDivergenceRow* nearest = nullptr;
    float nearest_d2 = 64.0f;
    dl->PushClipRect(f.min, f.max, true);
    if (r.jump_layer >= 0) {
        const float x = f.x_of(r.jump_layer);
        const ImU32 red = ImGui::ColorConvertFloat4ToU32(palette().error);
        dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), red, 1.5f);
        const std::string label = "l_out jumps @ " + std::to_string(r.jump_layer);
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        dl->AddText(ImVec2(x + 4 + w > f.max.x ? x - 4 - w : x + 4, f.min.y + 2), red, label.c_str());
    }
    for (size_t b = 0; b < bases.size(); ++b) {
        std::vector<ImVec2> points;
        for (const LayerDivergenceRow& row : r.rows) {
            if (row.layer < 0 || row.base != bases[b]) continue;
            ImVec2 p(f.x_of(row.layer), f.y_of(value(row)));
            points.push_back(p);
            const float dx = p.x - mouse.x, dy = p.y - mouse.y;
            if (hovered && dx * dx + dy * dy < nearest_d2) {
                nearest_d2 = dx * dx + dy * dy;
                nearest = &row;
            }
        }
        const ImU32 color = plot_series_color(b);
        if (points.size() > 1) dl->AddPolyline(points.data(), static_cast<int>(points.size()), color, ImDrawFlags_None, 2.0f);
        for (const ImVec2& p : points) dl->AddCircleFilled(p, 3.5f, color);
    }
    dl->PopClipRect();
    ImGui::EndGroup();
    if (nearest) {
        ImGui::BeginTooltip();
        ui::text(escape_for_display(nearest->tensor, 80) + "\nrelative error " + significant(nearest->rel_error, 4) + "\ncosine " +
                 significant(nearest->cosine, 6) + "\nSQNR " + sqnr_text(nearest->sqnr_db) + " dB");
        ImGui::EndTooltip();
    }
}

void InferenceDivergenceView::table(PanelContext& ctx, const LayerDivergenceResult& r) {
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
        ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("divergence_rows", 5, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    const char* headers[] = {"tensor", "layer", "relative error", "cosine", "SQNR (dB)"};
    for (int i = 0; i < 5; ++i)
        ImGui::TableSetupColumn(headers[i], i == 0 ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    ImGui::PushFont(ctx.fonts.mono());
    for (const LayerDivergenceRow& row : r.rows) {
        ImGui::TableNextRow();
        if (row.layer == r.jump_layer && row.base == "l_out")
            ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1,
                                   ImGui::ColorConvertFloat4ToU32(ImVec4(palette().error.x, palette().error.y, palette().error.z, 0.25f)));
        ImGui::TableNextColumn();
        ui::text(escape_for_display(row.tensor, 80));
        ImGui::TableNextColumn();
        ui::text(std::to_string(row.layer));
        ImGui::TableNextColumn();
        ui::text(significant(row.rel_error, 4));
        ImGui::TableNextColumn();
        ui::text(significant(row.cosine, 6));
        ImGui::TableNextColumn();
        ui::text(sqnr_text(row.sqnr_db));
    }
    ImGui::PopFont();
    ImGui::EndTable();
}

void InferenceDivergenceView::draw(PanelContext& ctx, InferenceController& c, InferenceAbView& ab) {
    if (!c.can_decode()) {
        ui::text_dim(c.loaded() ? "The model is loaded as vocabulary only: reload it with weights to compare layers."
                                : "Load the model (A) to compare its layers with the B chosen in the A/B tab.");
        return;
    }
    Document* b = ab.chosen_b(ctx);
    ui::text("B: " + (b ? escape_for_display(b->title, 200) : std::string("none")) + " (chosen in the A/B tab)");
    ImGui::SameLine(0, 16);
    ImGui::BeginDisabled(c.busy() || !b || prompt.empty());
    if (ImGui::Button("Compare layers")) run(ctx, c, ab);
    ImGui::EndDisabled();
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("prompt").x - ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::InputText("prompt", &prompt);
    if (const auto& e = error_of(c.latest<DivergenceOp>())) {
        ImGui::PushTextWrapPos(0);
        ui::job_error_text(*e);
        ImGui::PopTextWrapPos();
    }
    const auto& d = outcome_of(c.latest<DivergenceOp>());
    if (!d) return;
    const LayerDivergenceResult& r = d->result;
    ui::text_dim("B: " + escape_for_display(d->b_model, 300) + "  \xC2\xB7  " + plural(r.tokens.size(), "token") +
                 ", a = A's row, b = B's");
    if (r.jump_layer < 0)
        ui::text_colored(palette().ok, "Every layer's output is identical in A and B.");
    else
        ui::text("The l_out relative error rises most at layer " + std::to_string(r.jump_layer) + ".");
    const float avail = ImGui::GetContentRegionAvail().y;
    const float height = std::clamp(avail * 0.55f, 140.0f, 340.0f);
    const float width = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
    layer_plot(r, Figure::rel_error, ImVec2(width, height));
    ImGui::SameLine();
    layer_plot(r, Figure::cosine, ImVec2(width, height));
    table(ctx, r);
}

}  // namespace mlens
