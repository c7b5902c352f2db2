#include "panels/model_error_layer_plot.h"

#include <algorithm>
#include <cmath>

#include "mlens/text/escape.h"
#include "panels/weights_tables.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

double value_of(const LayerError& l, LayerMetric metric) { return metric == LayerMetric::rmse ? l.rmse : l.worst_nmse; }

int64_t last_block(const std::vector<LayerError>& layers) {
    int64_t last = -1;
    for (const LayerError& l : layers) last = std::max<int64_t>(last, l.layer);
    return last;
}

}  // namespace

double layer_plot_position(const std::vector<LayerError>& layers, int64_t layer) {
    return layer >= 0 ? static_cast<double>(layer) : static_cast<double>(last_block(layers) + 2);
}

std::optional<size_t> layer_error_plot(const std::vector<LayerError>& layers, LayerMetric metric, ImVec2 size) {
    if (layers.empty()) return std::nullopt;
    double top = 0, lo = INFINITY, hi = -INFINITY;
    for (const LayerError& l : layers) {
        if (double v = value_of(l, metric); std::isfinite(v)) top = std::max(top, v);
        lo = std::min(lo, layer_plot_position(layers, l.layer));
        hi = std::max(hi, layer_plot_position(layers, l.layer));
    }
    const bool outside = layers.front().layer < 0 || layers.back().layer < 0;
    const double other_at = layer_plot_position(layers, -1);
    PlotRange range{lo - 0.5, hi + 0.5, 0.0, top > 0 ? top * 1.1 : 1.0};
    const char* y_title = metric == LayerMetric::rmse ? "pooled RMSE" : "NMSE of the worst tensor";
    // Block ticks only; the other group's label is drawn under its bar, whatever the tick step.
    const auto tick = [&](double x) {
        return x >= 0 && x < other_at - 1 && x == std::round(x) ? std::to_string(static_cast<int64_t>(x)) : std::string();
    };
    PlotFrame f = draw_plot_frame("##layer_error", size, range, outside ? "block (other: embeddings, output, final norm)" : "block", y_title,
                                  true, tick);
    bool hovered = ImGui::IsItemHovered();
    bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float bar_w = std::clamp((f.max.x - f.min.x) / static_cast<float>(range.x_hi - range.x_lo) * 0.7f, 1.0f, 48.0f);
    ImVec2 mouse = ImGui::GetIO().MousePos;
    std::optional<size_t> under;
    if (hovered && f.contains(mouse)) {
        double at = std::floor(f.x_at(mouse.x) + 0.5);
        for (size_t i = 0; i < layers.size(); ++i)
            if (layer_plot_position(layers, layers[i].layer) == at) under = i;
    }
    dl->PushClipRect(f.min, f.max, true);
    for (size_t i = 0; i < layers.size(); ++i) {
        double v = value_of(layers[i], metric);
        float x = f.x_of(layer_plot_position(layers, layers[i].layer));
        float y = std::isfinite(v) ? std::min(f.y_of(v), f.max.y - (v > 0 ? 1.0f : 0.0f)) : f.min.y;
        dl->AddRectFilled(ImVec2(x - bar_w / 2, y), ImVec2(x + bar_w / 2, f.max.y), plot_series_color(layers[i].layer < 0 ? 1 : 0));
        if (under == i)
            dl->AddRect(ImVec2(x - bar_w / 2 - 1, f.min.y), ImVec2(x + bar_w / 2 + 1, f.max.y), ImGui::GetColorU32(ImGuiCol_Text));
    }
    if (outside) {
        // The other group stands apart: a line between it and the blocks.
        const float gap = f.x_of(other_at - 1);
        dl->AddLine(ImVec2(gap, f.min.y), ImVec2(gap, f.max.y), ImGui::GetColorU32(ImGuiCol_Border));
    }

    if (top == 0) {
        // Zero-height bars would leave the plot looking empty: say what it shows.
        const char* note = "no error in any layer: the values are identical";
        const ImVec2 text = ImGui::CalcTextSize(note);
        dl->AddText(ImVec2((f.min.x + f.max.x - text.x) / 2, (f.min.y + f.max.y - text.y) / 2), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                    note);
    }
    dl->PopClipRect();
    if (outside) {
        const float w = ImGui::CalcTextSize("other").x;
        dl->AddText(ImVec2(f.x_of(other_at) - w / 2, f.max.y + 5), ImGui::ColorConvertFloat4ToU32(palette().dim), "other");
    }
    if (!under) return std::nullopt;
    const LayerError& l = layers[*under];
    ImGui::BeginTooltip();
    ui::text(l.layer < 0 ? std::string("outside the blocks") : "layer " + std::to_string(l.layer));
    ui::label_value("tensors ", std::to_string(l.tensors));
    ui::label_value("pooled RMSE ", number_text(l.rmse));
    ui::label_value("largest max |a-b| ", number_text(l.max_abs));
    ui::label_value("worst tensor ", escape_for_display(l.worst_tensor, 120));
    ui::label_value("its NMSE ", number_text(l.worst_nmse));
    ui::text_dim("Click: show the worst tensor in the Weights panel");
    ImGui::EndTooltip();
    return clicked ? under : std::nullopt;
}

}  // namespace mlens
