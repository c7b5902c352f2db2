#include "widgets/plot_frame.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "plot_axes.h"
#include "theme.h"

namespace mlens {

float PlotFrame::x_of(double x) const {
    double t = (x - range.x_lo) / (range.x_hi - range.x_lo);
    return min.x + static_cast<float>(t) * (max.x - min.x);
}

float PlotFrame::y_of(double y) const {
    double t = (y - range.y_lo) / (range.y_hi - range.y_lo);
    return max.y - static_cast<float>(t) * (max.y - min.y);
}

double PlotFrame::x_at(float sx) const {
    double t = (sx - min.x) / std::max(1.0f, max.x - min.x);
    return range.x_lo + t * (range.x_hi - range.x_lo);
}

ImU32 plot_series_color(size_t position) {
    static const ImU32 kColors[] = {IM_COL32(86, 156, 214, 255),  IM_COL32(236, 144, 52, 255), IM_COL32(96, 190, 110, 255),
                                    IM_COL32(190, 110, 200, 255), IM_COL32(220, 80, 90, 255),  IM_COL32(200, 190, 80, 255)};
    return kColors[position % std::size(kColors)];
}

namespace {

void widen(double& lo, double& hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi > lo) return;
    double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.5;
    lo -= pad;
    hi += pad;
}

}  // namespace

PlotFrame draw_plot_frame(const char* id, ImVec2 size, PlotRange range, const char* x_title, const char* y_title, bool integer_x,
                          const TickLabel& x_label) {
    widen(range.x_lo, range.x_hi);
    widen(range.y_lo, range.y_hi);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (size.x <= 0) size.x = std::max(avail.x, 160.0f);
    if (size.y <= 0) size.y = std::max(avail.y, 100.0f);
    ImGui::InvisibleButton(id, size);
    ImVec2 origin = ImGui::GetItemRectMin();
    const float line = ImGui::GetTextLineHeight();

    PlotFrame f;
    f.range = range;
    int y_ticks = std::clamp(static_cast<int>((size.y - 3 * line) / (line * 2.2f)), 2, 6);
    double y_step = nice_step(range.y_hi - range.y_lo, y_ticks);
    std::vector<double> ys = nice_ticks(range.y_lo, range.y_hi, y_ticks);
    float label_w = ImGui::CalcTextSize("0.00").x;
    for (double v : ys) label_w = std::max(label_w, ImGui::CalcTextSize(tick_label(v, y_step).c_str()).x);
    f.min = ImVec2(origin.x + label_w + 10, origin.y + line + 6);
    f.max = ImVec2(origin.x + size.x - 10, origin.y + size.y - 2 * line - 8);
    f.max.x = std::max(f.max.x, f.min.x + 10);
    f.max.y = std::max(f.max.y, f.min.y + 10);

    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.5f);
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim = ImGui::ColorConvertFloat4ToU32(palette().dim);
    dl->AddRectFilled(f.min, f.max, ImGui::GetColorU32(ImGuiCol_FrameBg));
    for (double v : ys) {
        float y = f.y_of(v);
        dl->AddLine(ImVec2(f.min.x, y), ImVec2(f.max.x, y), grid);
        std::string label = tick_label(v, y_step);
        dl->AddText(ImVec2(f.min.x - ImGui::CalcTextSize(label.c_str()).x - 5, y - line / 2), dim, label.c_str());
    }
    int x_ticks = std::clamp(static_cast<int>((f.max.x - f.min.x) / 70), 2, 12);
    double x_step = nice_step(range.x_hi - range.x_lo, x_ticks);
    if (integer_x) x_step = std::max(1.0, std::round(x_step));
    for (double v = std::ceil(range.x_lo / x_step) * x_step; v <= range.x_hi + 1e-9; v += x_step) {
        std::string label = x_label ? x_label(v) : tick_label(v, x_step);
        if (label.empty()) continue;
        float x = f.x_of(v);
        dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), grid);
        dl->AddLine(ImVec2(x, f.max.y), ImVec2(x, f.max.y + 4), text);
        float w = ImGui::CalcTextSize(label.c_str()).x;
        dl->AddText(ImVec2(x - w / 2, f.max.y + 5), dim, label.c_str());
    }
    dl->AddRect(f.min, f.max, ImGui::GetColorU32(ImGuiCol_Border));
    dl->AddText(ImVec2(origin.x, origin.y + 2), text, y_title);
    float xw = ImGui::CalcTextSize(x_title).x;
    dl->AddText(ImVec2((f.min.x + f.max.x - xw) / 2, f.max.y + line + 7), text, x_title);
    return f;
}

}  // namespace mlens
